#pragma once
// Engine <-> GUI wire format: one JSON object per line; a message that carries binary data
// (a tensor tile, a record blob) says how many bytes follow its newline in "payload_bytes".
// Text stays greppable in logs; tensors are not base64-inflated.

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace dfi::protocol {

struct Frame {
  nlohmann::json header;   // must be an object; "payload_bytes" is managed by the codec
  std::string payload;     // raw bytes, may be empty
};

// Every frame's header says what it is under this key (a record type or a message type).
inline constexpr std::string_view kFrameTypeKey = "type";

// Refuses payloads above this size so that a corrupted length cannot exhaust memory.
inline constexpr std::size_t kMaxPayloadBytes = std::size_t{1} << 30;

void writeFrame(std::ostream& out, const Frame& frame);

// nullopt at a clean end of stream; throws dfi::FormatError on a malformed line or a
// truncated payload, naming `streamName` and the line number.
class FrameReader {
 public:
  FrameReader(std::istream& in, std::string streamName);
  std::optional<Frame> next();

 private:
  std::istream& in_;
  std::string streamName_;
  std::size_t line_ = 0;
};

// The same format decoded from bytes as they arrive (a QProcess's stdout in the GUI): feed()
// what was read, then take complete frames with next() until it returns nullopt.
class FrameDecoder {
 public:
  explicit FrameDecoder(std::string streamName);
  void feed(std::string_view bytes);
  // Throws dfi::FormatError (stream name and line) on a malformed header.
  std::optional<Frame> next();
  // True when no partial frame is buffered (a stream may end here cleanly).
  bool idle() const;

 private:
  std::string streamName_;
  std::string buffer_;
  std::size_t consumed_ = 0;
  std::size_t line_ = 0;
  std::optional<std::pair<Frame, std::size_t>> pending_;  // header read, payload awaited
};

}  // namespace dfi::protocol
