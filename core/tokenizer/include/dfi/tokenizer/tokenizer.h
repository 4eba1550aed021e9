#pragma once
// Byte-level BPE tokenizer read from a Hugging Face tokenizer.json (Qwen2/Qwen3/Qwen3.5
// layout), producing exactly the ids and text of HF `tokenizers`:
//   encode: split on added tokens (longest first) -> NFC -> split regex (PCRE2) ->
//           bytes -> BPE by merge rank;
//   decode: token bytes concatenated, invalid UTF-8 replaced by U+FFFD per maximal subpart.
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
  // Reads dir/tokenizer.json and, when present, the chat template (dir/chat_template.jinja,
  // else the chat_template of dir/tokenizer_config.json). An unknown template is an error.
  static Tokenizer fromDirectory(const std::filesystem::path& dir);

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
  // Id of an added token's content or of a vocabulary entry (in its byte-level spelling).
  std::optional<std::int32_t> tokenId(std::string_view content) const;
  // One more than the largest id (the size of an embedding table covering every token).
  std::size_t vocabSize() const;

  // The chat template found by fromDirectory, if any. A template it cannot render does not stop
  // the tokenizer from loading; asking for it then throws dfi::UsageError naming the file.
  std::optional<ChatTemplateKind> chatTemplate() const;

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace dfi::tokenizer
