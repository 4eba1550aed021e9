#pragma once
// NFC normalisation through utf8proc. Internal to dfi_tokenizer.

#include <string>
#include <string_view>

namespace dfi::tokenizer::detail {

// Returns `text` in NFC. `storage` holds the result when it differs from the input; text that
// cannot change (no code point from U+0300 on) is returned as is, without calling utf8proc.
std::string_view toNfc(std::string_view text, std::string& storage);

}  // namespace dfi::tokenizer::detail
