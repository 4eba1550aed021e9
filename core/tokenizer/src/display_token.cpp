#include "dfi/tokenizer/display_token.h"

#include <cstdio>

#include "dfi/tokenizer/tokenizer.h"
#include "dfi/base/utf8.h"
#include "tokenizer_impl.h"

namespace dfi::tokenizer {
namespace {

void appendVisible(char32_t cp, std::string& out) {
  switch (cp) {
    case U' ': out += "\u00B7"; return;
    case U'\n': out += "\u23CE"; return;
    case U'\t': out += "\u2192"; return;
    default: break;
  }
  if (cp < 0x20) return utf8::appendCodePoint(0x2400 + cp, out);  // includes CR -> U+240D
  if (cp == 0x7F) return utf8::appendCodePoint(0x2421, out);
  utf8::appendCodePoint(cp, out);
}

void appendHexByte(unsigned char byte, std::string& out) {
  char buffer[5];
  std::snprintf(buffer, sizeof buffer, "\\x%02X", byte);
  out += buffer;
}

}  // namespace

std::string displayBytes(std::string_view bytes) {
  std::string out;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    // Take the longest valid prefix of the rest; bytes it cannot include are shown in hex.
    const std::string_view rest = bytes.substr(pos);
    const std::size_t validLength = utf8::firstInvalidByte(rest).value_or(rest.size());
    const std::string_view valid = rest.substr(0, validLength);
    for (std::size_t i = 0; i < valid.size();) appendVisible(utf8::nextCodePoint(valid, i), out);
    pos += validLength;
    if (pos < bytes.size()) appendHexByte(static_cast<unsigned char>(bytes[pos++]), out);
  }
  return out;
}

std::string displaySpecial(std::string_view content) {
  std::string_view name = content;
  if (name.size() > 4 && name.starts_with("<|") && name.ends_with("|>")) {
    name = name.substr(2, name.size() - 4);
  } else if (name.size() > 2 && name.starts_with('<') && name.ends_with('>')) {
    name = name.substr(1, name.size() - 2);
  }
  return "\u27E8" + displayBytes(name) + "\u27E9";
}

std::string Tokenizer::displayToken(std::int32_t id) const {
  if (!impl_->known(id)) return "\u27E8unknown " + std::to_string(id) + "\u27E9";
  if (impl_->kinds[id] == Impl::Kind::Special) return displaySpecial(impl_->addedContent[id]);
  return displayBytes(impl_->bytes[id]);
}

}  // namespace dfi::tokenizer
