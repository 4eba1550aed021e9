#pragma once
// Model directories that ship tiktoken rank files instead of tokenizer.json, read into the
// same TokenizerSpec a tokenizer.json gives (transformers' TikTokenConverter makes the Hub's
// tokenizer.json files from these ranks the same way: byte-level BPE, merges implied by the
// ranks, ignore_merges, the family's split regex, the specials as added tokens).
//
// Which layout a directory has is told by where its rank file is, since each family ships it
// under its own name, and that fixes the split pattern:
//   original/tokenizer.model  Llama 3.x (meta's tiktoken model; Llama 2 put a SentencePiece
//                             model there instead, which is rejected as not a rank file)
//   tiktoken.model            Kimi (Moonshot's TikTokenTokenizer, tokenization_kimi.py)
//   <encoding>.tiktoken       an OpenAI encoding by name: o200k_base, o200k_harmony
// The specials are what tokenizer_config.json's added_tokens_decoder lists; only without it
// does the family's own table apply (tiktoken_families.cpp), and config.json's model_type
// "gpt_oss" then picks o200k_harmony's specials for o200k_base ranks.
// Internal to dfi_tokenizer.

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer_spec.h"

namespace dfi::tokenizer::detail {

// The rank file a directory without tokenizer.json would be read from, if any.
std::optional<std::filesystem::path> findTiktokenFile(const std::filesystem::path& dir);

// Reads `rankFile` (found by findTiktokenFile in `dir`) and the directory's configs. Throws
// IoError, FormatError (a bad rank line, naming the line) or ValidationError naming the file
// and the field.
TokenizerSpec readTiktokenDirectory(const std::filesystem::path& dir, const std::filesystem::path& rankFile);

// "<base64 token> <rank>" per line, as tiktoken.load.load_tiktoken_bpe reads it: token bytes
// and rank, in file order.
std::vector<std::pair<std::string, std::int32_t>> readTiktokenRanks(const std::filesystem::path& path);

}  // namespace dfi::tokenizer::detail
