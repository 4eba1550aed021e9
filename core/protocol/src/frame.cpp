#include "dfi/protocol/frame.h"

#include <algorithm>
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

namespace {

// Parses one header line; returns the frame with its payload still to be read and the
// payload's size (0 when none). Shared by the blocking reader and the incremental decoder.
std::pair<Frame, std::size_t> parseHeaderLine(const std::string& line, const ErrorContext& where) {
  Frame frame;
  try {
    frame.header = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a huge number
    throw FormatError(std::string("not a JSON message: ") + e.what(), where);
  }
  if (!frame.header.is_object()) throw FormatError("message is not a JSON object", where);
  std::size_t payloadBytes = 0;
  if (auto it = frame.header.find("payload_bytes"); it != frame.header.end()) {
    if (!it->is_number_unsigned() || it->get<std::size_t>() > kMaxPayloadBytes)
      throw FormatError("payload_bytes must be an integer in [0, 2^30]", where);
    payloadBytes = it->get<std::size_t>();
    frame.header.erase(it);
  }
  return {std::move(frame), payloadBytes};
}

}  // namespace

std::optional<Frame> FrameReader::next() {
  std::string line;
  do {
    if (!std::getline(in_, line)) return std::nullopt;
    ++line_;
  } while (line.empty());
  const ErrorContext where{.file = streamName_, .item = "line " + std::to_string(line_)};
  auto [frame, payloadBytes] = parseHeaderLine(line, where);
  // In pieces, so that a length the stream does not deliver costs the bytes that arrived, not
  // the bytes claimed (up to kMaxPayloadBytes from any line of serve's input).
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  while (frame.payload.size() < payloadBytes) {
    const std::size_t had = frame.payload.size();
    const std::size_t want = std::min(kPiece, payloadBytes - had);
    frame.payload.resize(had + want);
    in_.read(frame.payload.data() + had, static_cast<std::streamsize>(want));
    if (static_cast<std::size_t>(in_.gcount()) != want)
      throw FormatError("stream ended inside a " + std::to_string(payloadBytes) + "-byte payload (got " +
                            std::to_string(had + static_cast<std::size_t>(in_.gcount())) + ")",
                        where);
  }
  return frame;
}

FrameDecoder::FrameDecoder(std::string streamName) : streamName_(std::move(streamName)) {}

void FrameDecoder::feed(std::string_view bytes) { buffer_.append(bytes); }

std::optional<Frame> FrameDecoder::next() {
  while (!pending_) {
    const auto newline = buffer_.find('\n', consumed_);
    if (newline == std::string::npos) return std::nullopt;
    std::string line = buffer_.substr(consumed_, newline - consumed_);
    consumed_ = newline + 1;
    ++line_;
    if (line.empty()) continue;
    pending_ = parseHeaderLine(line, {.file = streamName_, .item = "line " + std::to_string(line_)});
  }
  const std::size_t payloadBytes = pending_->second;
  if (buffer_.size() - consumed_ < payloadBytes) return std::nullopt;
  Frame frame = std::move(pending_->first);
  frame.payload = buffer_.substr(consumed_, payloadBytes);
  consumed_ += payloadBytes;
  pending_.reset();
  // Drop what has been consumed once it dominates the buffer, so memory stays bounded.
  if (consumed_ > buffer_.size() / 2) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  return frame;
}

bool FrameDecoder::idle() const { return !pending_ && consumed_ == buffer_.size(); }

}  // namespace dfi::protocol
