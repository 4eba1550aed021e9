#pragma once
// Engine <-> GUI wire format: one JSON object per line; a message that carries binary data
// (a tensor tile, a record blob) says how many bytes follow its newline in "payload_bytes".
// Text stays greppable in logs; tensors are not base64-inflated.

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace dfi::protocol {

struct Frame {
  nlohmann::json header;   // must be an object; "payload_bytes" is managed by the codec
  std::string payload;     // raw bytes, may be empty
};

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

}  // namespace dfi::protocol
