#pragma once
// How a token is shown in token strips and tables: one line, always valid UTF-8, with the
// characters that would otherwise be invisible or break the layout made visible.
//   space -> '·' (U+00B7)   newline -> '⏎' (U+23CE)   tab -> '→' (U+2192)   CR -> '␍' (U+240D)
//   other C0 controls and DEL -> their Control Pictures symbol (U+2400 + c, DEL -> U+2421)
//   bytes that are not (yet) a whole UTF-8 character -> \xHH, e.g. "\xE4\xB8"
//   special added tokens -> their name in angle brackets: <|im_start|> -> ⟨im_start⟩
// Non-special added tokens (<think>, <tool_call>) are shown like text, since they already
// read as markup. A real '·' in text therefore looks like a space: the token strip colours
// whitespace differently, the table keeps the raw bytes beside the display form.

#include <string>
#include <string_view>

namespace dfi::tokenizer {

std::string displayBytes(std::string_view bytes);
// "<|im_start|>" -> "⟨im_start⟩", "<pad>" -> "⟨pad⟩", other content -> "⟨content⟩".
std::string displaySpecial(std::string_view content);

}  // namespace dfi::tokenizer
