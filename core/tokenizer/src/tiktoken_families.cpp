#include "tiktoken_families.h"

namespace dfi::tokenizer::detail {
namespace {

// meta-llama/llama-models models/llama3/tokenizer.py (pat_str); transformers' TikTokenConverter
// uses the same pattern by default, and the Hub's Llama 3 tokenizer.json has it as its Split.
const std::string kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// openai/tiktoken tiktoken_ext/openai_public.py, o200k_base() (o200k_harmony reuses it).
const std::string kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Moonshot's tokenization_kimi.py (TikTokenTokenizer.pat_str): like o200k, with Han characters
// split off on their own. The class intersections (&&) are rewritten for PCRE2 by RegexSplitter.
const std::string kKimiPattern =
    R"([\p{Han}]+)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

AddedTokenSpec special(std::int64_t id, std::string content) {
  return {.id = static_cast<std::int32_t>(id), .content = std::move(content), .special = true};
}

// Llama 3.1 / 3.2 / 3.3: the 256 specials after the 128000 ranks, as their tokenizer_config.json
// added_tokens_decoder lists them (and meta's tokenizer.py defines them): eleven named ones,
// the rest <|reserved_special_token_N|> numbered on from the named reserved ones.
std::vector<AddedTokenSpec> llama3Specials(std::size_t rankCount) {
  static const char* const kNamed[] = {
      "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
      "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>", "<|start_header_id|>", "<|end_header_id|>",
      "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"};
  std::vector<AddedTokenSpec> out;
  const auto base = static_cast<std::int64_t>(rankCount);
  for (std::int64_t i = 0; i < 256; ++i)
    out.push_back(special(base + i, i < 11 ? kNamed[i] : "<|reserved_special_token_" + std::to_string(i - 8) + "|>"));
  return out;
}

// tiktoken openai_public.py o200k_base(): {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}.
std::vector<AddedTokenSpec> o200kBaseSpecials() { return {special(199999, "<|endoftext|>"), special(200018, "<|endofprompt|>")}; }

// tiktoken openai_public.py o200k_harmony(): o200k_base's, the named harmony tokens, and
// <|reserved_N|> for every other id up to 201087. 200018 has two names there, <|endofprompt|>
// and <|reserved_200018|>; both encode to it and it decodes as <|endofprompt|>, the first.
std::vector<AddedTokenSpec> o200kHarmonySpecials() {
  std::vector<AddedTokenSpec> out = o200kBaseSpecials();
  const std::pair<std::int64_t, const char*> named[] = {
      {199998, "<|startoftext|>"}, {200002, "<|return|>"}, {200003, "<|constrain|>"}, {200005, "<|channel|>"},
      {200006, "<|start|>"},       {200007, "<|end|>"},    {200008, "<|message|>"},   {200012, "<|call|>"}};
  for (const auto& [id, content] : named) out.push_back(special(id, content));
  for (const std::int64_t id : {200000, 200001, 200004, 200009, 200010, 200011})
    out.push_back(special(id, "<|reserved_" + std::to_string(id) + "|>"));
  for (std::int64_t id = 200013; id < 201088; ++id) out.push_back(special(id, "<|reserved_" + std::to_string(id) + "|>"));
  return out;
}

}  // namespace

const char* familyName(TiktokenFamily family) {
  switch (family) {
    case TiktokenFamily::Llama3: return "Llama 3";
    case TiktokenFamily::Kimi: return "Kimi";
    case TiktokenFamily::O200kBase: return "o200k_base";
    case TiktokenFamily::O200kHarmony: return "o200k_harmony";
  }
  return "?";
}

const std::string& splitPattern(TiktokenFamily family) {
  switch (family) {
    case TiktokenFamily::Llama3: return kLlama3Pattern;
    case TiktokenFamily::Kimi: return kKimiPattern;
    case TiktokenFamily::O200kBase:
    case TiktokenFamily::O200kHarmony: return kO200kPattern;
  }
  return kLlama3Pattern;
}

std::vector<AddedTokenSpec> defaultSpecials(TiktokenFamily family, std::size_t rankCount) {
  switch (family) {
    case TiktokenFamily::Llama3: return llama3Specials(rankCount);
    case TiktokenFamily::Kimi: {
      std::vector<AddedTokenSpec> out;
      for (std::size_t i = 0; i < reservedSpecialSlots(family); ++i) {
        const auto id = static_cast<std::int64_t>(rankCount + i);
        out.push_back(special(id, reservedSpecialName(family, id)));
      }
      return out;
    }
    case TiktokenFamily::O200kBase: return o200kBaseSpecials();
    case TiktokenFamily::O200kHarmony: return o200kHarmonySpecials();
  }
  return {};
}

// tokenization_kimi.py: num_reserved_special_tokens = 256, every id from len(ranks) on that
// added_tokens_decoder does not name is f"<|reserved_token_{i}|>".
std::size_t reservedSpecialSlots(TiktokenFamily family) { return family == TiktokenFamily::Kimi ? 256 : 0; }

std::string reservedSpecialName(TiktokenFamily, std::int64_t id) { return "<|reserved_token_" + std::to_string(id) + "|>"; }

}  // namespace dfi::tokenizer::detail
