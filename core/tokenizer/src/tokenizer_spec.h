#pragma once
// What a tokenizer source says, validated and reduced to the parts this tokenizer implements.
// Two sources produce it: a Hugging Face tokenizer.json (tokenizer_json.cpp) and a directory
// with a tiktoken rank file (tiktoken_layout.cpp). Both describe the same pipeline HF runs:
//   added tokens split off -> normalizer steps -> pre-tokenizer steps -> BPE model per piece;
//   ids -> token strings -> decoder steps -> text.
// The model is BPE in both; what differs is where its merges come from (listed, or implied by
// tiktoken ranks) and its alphabet: bytes (a ByteLevel pre-tokenizer, GPT-2 / Qwen / Llama 3 /
// gpt-oss) or characters with <0xNN> byte fallback (SentencePiece-style, Gemma / Llama 2).
// Internal to dfi_tokenizer.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dfi::tokenizer::detail {

struct AddedTokenSpec {
  std::int32_t id = 0;
  std::string content;
  bool special = false;
};

// HF's Metaspace prepend_scheme: where the replacement character is put in front of a piece.
enum class PrependScheme : std::uint8_t { Always, First, Never };

// One normalizer step, applied to each stretch of text between added tokens.
struct NormalizerStep {
  enum class Kind : std::uint8_t {
    Nfc,      // Unicode NFC
    Replace,  // every occurrence of the literal `pattern` by `content`
    Prepend,  // `content` in front of a non-empty stretch
  };
  Kind kind = Kind::Nfc;
  std::string pattern;
  std::string content;
};

// What a Split does with a match (HF's SplitDelimiterBehavior).
enum class SplitBehavior : std::uint8_t {
  Isolated,            // matches and the gaps between them are pieces
  Removed,             // gaps are pieces, matches are dropped
  MergedWithPrevious,  // a match joins the piece before it (Gemma: Split(" ", merged_with_previous))
  MergedWithNext,      // a match joins the piece after it
  Contiguous,          // adjacent matches form one piece
};

// One pre-tokenizer step; each cuts the pieces of the step before into smaller ones.
struct PreTokenizerStep {
  enum class Kind : std::uint8_t {
    Split,      // regex `pattern` (PCRE syntax) cuts per `behavior`
    ByteLevel,  // the piece's bytes become the BPE symbols (no regex of its own); always last
    Metaspace,  // spaces -> `replacement`, prepended per `prependScheme`, split before each one
  };
  Kind kind = Kind::Split;
  std::string pattern;
  std::string field;  // JSON pointer (or source) of the pattern, for error messages
  std::string replacement;
  SplitBehavior behavior = SplitBehavior::Isolated;
  bool invert = false;  // Split: the gaps are treated as the matches
  PrependScheme prependScheme = PrependScheme::Always;
  bool split = true;
};

// One decoder step, applied in order to the token strings of the ids being decoded.
struct DecoderStep {
  enum class Kind : std::uint8_t {
    ByteLevel,     // byte-level symbols back to bytes, then UTF-8 with U+FFFD; the only step
    Replace,       // every literal `pattern` in each token by `content`
    ByteFallback,  // runs of <0xNN> tokens to their bytes (each byte U+FFFD if the run is not UTF-8)
    Fuse,          // all tokens into one string
    Strip,         // up to `start` leading `content` characters off each token (stop is 0)
    Metaspace,     // `replacement` -> space; dropped in the first token unless prependScheme Never
  };
  Kind kind = Kind::ByteLevel;
  std::string pattern;
  std::string content;
  std::string replacement;
  std::size_t start = 0;
  PrependScheme prependScheme = PrependScheme::Always;
};

struct ModelSpec {
  enum class Merges : std::uint8_t {
    Listed,  // model.merges of a tokenizer.json, in rank order
    Ranks,   // tiktoken: pair (a, b) merges when a+b is a token, the lower its rank (= id) the earlier
  };
  Merges mergeSource = Merges::Listed;
  std::vector<std::pair<std::string, std::int32_t>> vocab;  // token spelling -> id
  std::vector<std::pair<std::string, std::string>> merges;  // Listed: in rank order
  bool ignoreMerges = false;  // a piece that is itself a token is emitted whole
  bool byteFallback = false;  // a character not in the vocabulary becomes its <0xNN> tokens
  bool fuseUnk = false;       // consecutive unknown characters become one unk token
  std::optional<std::string> unkToken;
};

struct TokenizerSpec {
  ModelSpec model;
  std::vector<NormalizerStep> normalizer;
  std::vector<PreTokenizerStep> preTokenizer;
  std::vector<DecoderStep> decoder;
  std::vector<AddedTokenSpec> addedTokens;
  // tiktoken layouts number their specials themselves (two names may even share an id, as in
  // o200k_harmony); tokenizer.json added tokens get HF's load-time ids instead.
  bool addedIdsAsGiven = false;

  // True when the BPE symbols are bytes (a ByteLevel pre-tokenizer ends the chain).
  bool byteLevel() const { return !preTokenizer.empty() && preTokenizer.back().kind == PreTokenizerStep::Kind::ByteLevel; }
};

// Reads and validates `path`; throws IoError, FormatError (not JSON) or ValidationError
// (a field this tokenizer does not support, or inconsistent), naming the file and field.
TokenizerSpec readTokenizerJson(const std::filesystem::path& path);

}  // namespace dfi::tokenizer::detail
