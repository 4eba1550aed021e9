#pragma once
// BPE tokenizer producing exactly the ids and text of the reference implementations:
//   - a Hugging Face tokenizer.json, byte-level (Qwen2/3/3.5, Llama 3, gpt-oss) or
//     SentencePiece-style with <0xNN> byte fallback (Gemma, Llama 2), as HF `tokenizers` does;
//   - a tiktoken rank file (Llama 3's original/tokenizer.model, Kimi's tiktoken.model, OpenAI's
//     <encoding>.tiktoken) as tiktoken does with the family's pattern and specials.
//   encode: split on added tokens (longest first) -> normalizer (NFC, Replace, Prepend) ->
//           pre-tokenizer (split regex on PCRE2, Metaspace) -> BPE by merge rank;
//   decode: the decoder steps (byte-level bytes with U+FFFD per maximal invalid subpart, or
//           Replace / ByteFallback / Fuse / Strip / Metaspace).
// Immutable after loading; copies share the loaded tables. encode/decode are thread-safe.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dfi/tokenizer/chat_template.h"

namespace dfi::tokenizer {

class Tokenizer {
 public:
  // Reads tokenizer.json. Throws IoError, FormatError or ValidationError naming the file
  // and the offending field.
  static Tokenizer fromFile(const std::filesystem::path& tokenizerJson);
  // Reads dir/tokenizer.json, or without one the directory's tiktoken rank file (layouts in
  // src/tiktoken_layout.h), and, when present, the chat template (dir/chat_template.jinja,
  // else the chat_template of dir/tokenizer_config.json; see chatTemplate()).
  static Tokenizer fromDirectory(const std::filesystem::path& dir);
  // fromDirectory for a model directory that may have no tokenizer: nullopt when it has neither
  // tokenizer.json nor a tiktoken rank file (prompts are then token ids).
  static std::optional<Tokenizer> inDirectory(const std::filesystem::path& dir);

  // Throws FormatError (item "text", with the byte offset) when `text` is not valid UTF-8.
  std::vector<std::int32_t> encode(std::string_view text) const;
  // Unknown ids are skipped, as HF does. skipSpecial drops added tokens marked special.
  std::string decode(std::span<const std::int32_t> ids, bool skipSpecial = false) const;

  // The raw bytes one token contributes to decoded text (may be part of a UTF-8 character);
  // empty for an unknown id. For an added token normally its content.
  std::string tokenText(std::int32_t id) const;
  // A one-line, always valid UTF-8 rendering for display; the form is in display_token.h.
  std::string displayToken(std::int32_t id) const;
  bool isSpecial(std::int32_t id) const;
  bool isAdded(std::int32_t id) const;
  // Id of an added token's content or of a vocabulary entry (in its spelling in the vocabulary:
  // byte-level symbols, or SentencePiece's with "▁").
  std::optional<std::int32_t> tokenId(std::string_view content) const;
  // One more than the largest id (the size of an embedding table covering every token).
  std::size_t vocabSize() const;

  // The chat template found by fromDirectory, if any. A template file that cannot be read or
  // parsed does not stop the tokenizer from loading; asking for it then throws that error
  // (naming the file, and the line and column of a syntax error).
  const std::optional<ChatTemplate>& chatTemplate() const;

  struct Impl;

 private:
  friend class IncrementalDecoder;
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace dfi::tokenizer
