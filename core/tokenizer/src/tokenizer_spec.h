#pragma once
// What a tokenizer.json says, validated and reduced to the parts this tokenizer implements
// (byte-level BPE as written by Hugging Face tokenizers for Qwen and GPT-2 style models).
// Internal to dfi_tokenizer.

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace dfi::tokenizer::detail {

struct AddedTokenSpec {
  std::int32_t id = 0;
  std::string content;
  bool special = false;
};

struct TokenizerSpec {
  std::vector<std::pair<std::string, std::int32_t>> vocab;     // byte-level token -> id
  std::vector<std::pair<std::string, std::string>> merges;     // in rank order
  std::vector<AddedTokenSpec> addedTokens;
  std::string splitRegex;  // the pre-tokenizer's Split pattern (PCRE-compatible syntax)
  bool nfc = false;        // normalizer is NFC (the only normalizer supported besides none)
  bool ignoreMerges = false;
};

// Reads and validates `path`; throws IoError, FormatError (not JSON) or ValidationError
// (a field this tokenizer does not support, or inconsistent), naming the file and field.
TokenizerSpec readTokenizerJson(const std::filesystem::path& path);

}  // namespace dfi::tokenizer::detail
