#include "dfi/protocol/frame.h"

#include <istream>
#include <ostream>

#include "dfi/base/error.h"

namespace dfi::protocol {

void writeFrame(std::ostream& out, const Frame& frame) {
  nlohmann::json header = frame.header;
  if (!frame.payload.empty()) header["payload_bytes"] = frame.payload.size();
  // Text fields (prompt text, settings) are expected to be UTF-8; a stray invalid byte is
  // replaced rather than making the whole message unsendable.
  out << header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out.write(frame.payload.data(), static_cast<std::streamsize>(frame.payload.size()));
  out.flush();
}

FrameReader::FrameReader(std::istream& in, std::string streamName)
    : in_(in), streamName_(std::move(streamName)) {}

std::optional<Frame> FrameReader::next() {
  std::string line;
  do {
    if (!std::getline(in_, line)) return std::nullopt;
    ++line_;
  } while (line.empty());
  const ErrorContext where{.file = streamName_, .item = "line " + std::to_string(line_)};

  Frame frame;
  try {
    frame.header = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    throw FormatError(std::string("not a JSON message: ") + e.what(), where);
  }
  if (!frame.header.is_object()) throw FormatError("message is not a JSON object", where);

  if (auto it = frame.header.find("payload_bytes"); it != frame.header.end()) {
    if (!it->is_number_unsigned() || it->get<std::size_t>() > kMaxPayloadBytes)
      throw FormatError("payload_bytes must be an integer in [0, 2^30]", where);
    frame.payload.resize(it->get<std::size_t>());
    in_.read(frame.payload.data(), static_cast<std::streamsize>(frame.payload.size()));
    if (static_cast<std::size_t>(in_.gcount()) != frame.payload.size())
      throw FormatError("stream ended inside a " + std::to_string(frame.payload.size()) +
                            "-byte payload (got " + std::to_string(in_.gcount()) + ")",
                        where);
    frame.header.erase(it);
  }
  return frame;
}

}  // namespace dfi::protocol
