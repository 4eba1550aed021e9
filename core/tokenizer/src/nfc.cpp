#include "nfc.h"

#include <cstdlib>
#include <memory>

#include <utf8proc.h>

#include "dfi/base/error.h"

namespace dfi::tokenizer::detail {
namespace {

// Every code point below U+0300 is its own NFC form and never composes with its neighbours
// (the first combining marks start at U+0300). In UTF-8 those are exactly the bytes < 0xCC.
bool mayChangeUnderNfc(std::string_view text) {
  for (const char c : text)
    if (static_cast<unsigned char>(c) >= 0xCC) return true;
  return false;
}

}  // namespace

std::string_view toNfc(std::string_view text, std::string& storage) {
  if (!mayChangeUnderNfc(text)) return text;
  utf8proc_uint8_t* result = nullptr;
  // An explicit length (no UTF8PROC_NULLTERM) so that NUL characters in the text survive.
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), static_cast<utf8proc_ssize_t>(text.size()),
                   &result, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) throw FormatError(std::string("NFC normalisation failed: ") + utf8proc_errmsg(n), {.item = "text"});
  const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(result, &std::free);
  storage.assign(reinterpret_cast<const char*>(result), static_cast<std::size_t>(n));
  return storage;
}

}  // namespace dfi::tokenizer::detail
