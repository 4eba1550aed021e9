#pragma once
// UTF-8 helpers shared by every library: validation (safetensors headers, tokenizer input),
// decoding (lossy conversion with the same replacement rule as Hugging Face tokenizers, which
// uses Rust's String::from_utf8_lossy) and incremental decoding (how much of a byte buffer is
// a still-incomplete character).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace dfi::utf8 {

// The U+FFFD replacement character, UTF-8 encoded.
inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Offset of the first byte that is not part of well-formed UTF-8, or nullopt if all is valid.
std::optional<std::size_t> firstInvalidByte(std::string_view bytes);

// Appends `bytes` to `out`, replacing each maximal ill-formed subsequence by one U+FFFD
// (Unicode's "substitution of maximal subparts", which from_utf8_lossy implements).
void appendLossy(std::string_view bytes, std::string& out);
std::string decodeLossy(std::string_view bytes);

// Length of the trailing bytes that form a well-formed but incomplete prefix of a character
// (0 to 3): those may still be completed by bytes that arrive later.
std::size_t incompleteTailLength(std::string_view bytes);

// Appends the UTF-8 encoding of `codePoint` (which must be a Unicode scalar value).
void appendCodePoint(char32_t codePoint, std::string& out);

// Decodes the character starting at bytes[pos] in valid UTF-8 and advances pos.
char32_t nextCodePoint(std::string_view bytes, std::size_t& pos);

}  // namespace dfi::utf8
