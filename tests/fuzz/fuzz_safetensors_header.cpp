// libFuzzer target for the safetensors header parser. Any input must either parse or raise a
// dfi::Error; anything else (a crash, a sanitizer report, another exception) is a bug. What
// parses must describe tensors inside the input and survive an encode/parse round trip.

#include <cstddef>
#include <cstdint>
#include <span>

#include "dfi/base/error.h"
#include "dfi/tensorfile/safetensors_header.h"

using namespace dfi::tensorfile;

namespace {

void check(bool condition) {
  if (!condition) __builtin_trap();
}

void checkRoundTrip(const SafetensorsHeader& header) {
  std::vector<TensorLayout> layouts;
  for (const auto& t : header.tensors) layouts.push_back({t.name, t.dtype, t.shape});
  EncodedHeader encoded;
  try {
    encoded = encodeSafetensorsHeader(layouts, header.metadata);
  } catch (const dfi::UsageError&) {
    return;  // names the reader accepts but the writer refuses to produce, such as ""
  }
  encoded.bytes.resize(encoded.bytes.size() + encoded.dataSize);
  const auto again = parseSafetensorsHeader(std::as_bytes(std::span(encoded.bytes)), "roundtrip");
  check(again.metadata == header.metadata);
  check(again.tensors.size() == header.tensors.size());
  for (std::size_t i = 0; i < header.tensors.size(); ++i) {
    const auto& a = header.tensors[i];
    const auto& b = again.tensors[i];
    check(a.name == b.name && a.dtype == b.dtype && a.shape == b.shape && a.byteSize == b.byteSize);
    check(a.fileOffset - header.dataStart() == b.fileOffset - again.dataStart());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  SafetensorsHeader header;
  try {
    header = parseSafetensorsHeader(bytes, "fuzz.safetensors");
  } catch (const dfi::Error&) {
    return 0;
  }
  for (const auto& t : header.tensors) {
    check(t.fileOffset >= header.dataStart() && t.fileOffset <= size && t.byteSize <= size - t.fileOffset);
    check(std::uint64_t(t.numel()) * dtypeSize(t.dtype) == t.byteSize);
  }
  checkRoundTrip(header);
  return 0;
}
