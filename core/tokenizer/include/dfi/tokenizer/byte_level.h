#pragma once
// GPT-2 / Qwen byte-level mapping: every byte is represented by one printable Unicode code
// point so that BPE works on text. Bytes 33..126, 161..172 and 174..255 map to themselves,
// the other 68 map to U+0100 + n in increasing byte order (space -> U+0120 'Ġ').

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dfi::tokenizer {

char32_t byteToCodePoint(std::uint8_t byte);
// The inverse; nullopt for a code point that no byte maps to.
std::optional<std::uint8_t> codePointToByte(char32_t codePoint);
// Raw bytes in their byte-level spelling (how byte-level vocabularies write tokens).
std::string byteLevelSpelling(std::string_view bytes);

}  // namespace dfi::tokenizer
