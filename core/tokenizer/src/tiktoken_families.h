#pragma once
// What a tiktoken rank file does not say and each family's own tokenizer code does: the split
// pattern and the special tokens. These tables are unavoidable for the patterns (no file in a
// model directory holds them) and a fallback for the specials (tokenizer_config.json lists them
// when the directory has one). Each entry names the code it is taken from.
// Internal to dfi_tokenizer.

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer_spec.h"

namespace dfi::tokenizer::detail {

enum class TiktokenFamily : std::uint8_t { Llama3, Kimi, O200kBase, O200kHarmony };

const char* familyName(TiktokenFamily family);
// The split regex, as the reference writes it (tiktoken's Rust regex syntax).
const std::string& splitPattern(TiktokenFamily family);
// The specials the reference defines for `rankCount` ranks, with their ids.
std::vector<AddedTokenSpec> defaultSpecials(TiktokenFamily family, std::size_t rankCount);
// Number of reserved special ids after the ranks that the family names even when
// tokenizer_config.json lists fewer (Kimi fills them as <|reserved_token_ID|>), or 0.
std::size_t reservedSpecialSlots(TiktokenFamily family);
std::string reservedSpecialName(TiktokenFamily family, std::int64_t id);

}  // namespace dfi::tokenizer::detail
