// libFuzzer target for the GUI <-> engine messages: any bytes, fed to a FrameDecoder in two
// pieces (split where the first byte says, as a pipe delivers them), either give frames or raise
// a dfi::Error, after which decoding goes on with the next line as the server's does. Each
// frame either decodes as a request and as a reply or raises a dfi::Error; requestIdOf never
// throws; what decodes encodes and decodes again to the same message.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string_view>

#include "dfi/base/error.h"
#include "dfi/protocol/frame.h"
#include "dfi/protocol/messages.h"

using namespace dfi::protocol;

namespace {

void check(bool condition) {
  if (!condition) __builtin_trap();
}

template <typename Message>
void checkRoundTrip(const Message& message, Message (*decode)(const Frame&, std::string_view)) {
  std::ostringstream wire;
  writeFrame(wire, encodeMessage(message));
  FrameDecoder again("again");
  again.feed(wire.str());
  const std::optional<Frame> frame = again.next();
  check(frame.has_value() && again.idle());
  check(decode(*frame, "again") == message);
}

template <typename Message>
void attempt(const Frame& frame, Message (*decode)(const Frame&, std::string_view)) {
  std::optional<Message> message;
  try {
    message = decode(frame, "fuzz");
  } catch (const dfi::Error&) {
    return;
  }
  checkRoundTrip(*message, decode);
}

void drain(FrameDecoder& decoder) {
  while (true) {
    std::optional<Frame> frame;
    try {
      frame = decoder.next();
    } catch (const dfi::Error&) {
      continue;  // the malformed line is consumed; the next one is read
    }
    if (!frame) return;
    requestIdOf(*frame);
    attempt<Request>(*frame, &decodeRequest);
    attempt<Reply>(*frame, &decodeReply);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t split = bytes.empty() ? 0 : data[0] % (bytes.size() + 1);
  FrameDecoder decoder("fuzz");
  decoder.feed(bytes.substr(0, split));
  drain(decoder);
  decoder.feed(bytes.substr(split));
  drain(decoder);
  return 0;
}
