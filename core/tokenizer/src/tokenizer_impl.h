#pragma once
// The loaded state behind dfi::tokenizer::Tokenizer. Internal to dfi_tokenizer.

#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "added_token_matcher.h"
#include "bpe.h"
#include "dfi/tokenizer/tokenizer.h"
#include "regex_splitter.h"
#include "tokenizer_spec.h"

namespace dfi::tokenizer {

struct Tokenizer::Impl {
  enum class Kind : std::uint8_t { Unused, Vocab, Added, Special };

  Impl(detail::TokenizerSpec spec, const std::filesystem::path& source);

  bool known(std::int32_t id) const {
    return id >= 0 && static_cast<std::size_t>(id) < kinds.size() && kinds[id] != Kind::Unused;
  }

  std::vector<Kind> kinds;                // by id
  std::vector<std::string> bytes;         // by id: what decoding the token yields, before UTF-8 repair
  std::vector<std::string> addedContent;  // by id: an added token's content, else empty
  std::unordered_map<std::string, std::int32_t> vocabIds;  // byte-level spelling -> id
  std::unordered_map<std::string, std::int32_t> addedIds;  // content -> id
  detail::AddedTokenMatcher addedMatcher;
  detail::RegexSplitter splitter;
  bool nfc;
  std::unique_ptr<detail::Bpe> bpe;
  std::optional<ChatTemplateKind> chatTemplate;
  // A template this engine cannot render (Llama 3, gpt-oss harmony...): kept, not thrown, so
  // the tokenizer still loads for plain text and token display; chatTemplate() throws it.
  std::exception_ptr chatTemplateError;
};

}  // namespace dfi::tokenizer
