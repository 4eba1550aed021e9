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
#include "decoder_chain.h"
#include "dfi/tokenizer/tokenizer.h"
#include "pre_tokenizer.h"
#include "tokenizer_spec.h"

namespace dfi::tokenizer {

struct Tokenizer::Impl {
  enum class Kind : std::uint8_t { Unused, Vocab, Added, Special };

  Impl(detail::TokenizerSpec spec, const std::filesystem::path& source);

  bool known(std::int32_t id) const {
    return id >= 0 && static_cast<std::size_t>(id) < kinds.size() && kinds[id] != Kind::Unused;
  }
  // What the decoder chain is fed for a (known) id: its bytes when byte-level, else its string.
  const std::string& decoderInput(std::int32_t id) const { return byteLevel ? bytes[id] : strings[id]; }

  bool byteLevel;                         // byte alphabet and the ByteLevel decoder
  std::vector<Kind> kinds;                // by id
  std::vector<std::string> bytes;         // by id: the token's text out of context (tokenText)
  std::vector<std::string> strings;       // by id, not byte-level: the vocabulary spelling or added content
  std::vector<std::string> addedContent;  // by id: an added token's content, else empty
  detail::TokenIds vocabIds;              // vocabulary spelling -> id
  std::unordered_map<std::string, std::int32_t> addedIds;  // content -> id
  detail::AddedTokenMatcher addedMatcher;
  detail::Normalizer normalizer;
  detail::PreTokenizer preTokenizer;
  std::unique_ptr<detail::Bpe> bpe;
  detail::DecoderChain decoder;
  std::optional<ChatTemplate> chatTemplate;
  // A template that cannot be read or parsed: kept, not thrown, so the tokenizer still loads
  // for plain text and token display; chatTemplate() throws it.
  std::exception_ptr chatTemplateError;
};

}  // namespace dfi::tokenizer
