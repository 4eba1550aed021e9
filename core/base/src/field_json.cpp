#include "dfi/base/field_json.h"

namespace dfi::json_detail {

std::string Path::item() const {
  std::string text = parent ? parent->item() : std::string();
  if (index != static_cast<std::size_t>(-1)) return text + "[" + std::to_string(index) + "]";
  return text.empty() ? std::string(name) : text + "." + std::string(name);
}

void Path::fail(const std::string& why) const {
  throw FormatError(why, {.file = std::string(stream), .item = item()});
}

std::string toHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    hex += kDigits[b >> 4];
    hex += kDigits[b & 15];
  }
  return hex;
}

std::optional<std::string> fromHex(std::string_view hex) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (hex.size() % 2) return std::nullopt;
  std::string bytes(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const int high = nibble(hex[2 * i]), low = nibble(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes[i] = static_cast<char>(high * 16 + low);
  }
  return bytes;
}

}  // namespace dfi::json_detail
