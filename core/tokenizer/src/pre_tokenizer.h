#pragma once
// The normalizer and pre-tokenizer steps of tokenizer_spec.h, run on one stretch of text
// between added tokens: the stretch is normalized, then cut into the pieces BPE encodes one by
// one. Pieces are handed on as they are found, without collecting them. Internal to dfi_tokenizer.

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "regex_splitter.h"
#include "tokenizer_spec.h"

namespace dfi::tokenizer::detail {

class Normalizer {
 public:
  explicit Normalizer(std::vector<NormalizerStep> steps) : steps_(std::move(steps)) {}
  // `text` normalized; the result points into `text` or into `storage`.
  std::string_view apply(std::string_view text, std::string& storage) const;

 private:
  std::vector<NormalizerStep> steps_;
};

class PreTokenizer {
 public:
  // Compiles the Split patterns; throws ValidationError naming `source` and the pattern's field.
  PreTokenizer(const std::vector<PreTokenizerStep>& steps, const std::filesystem::path& source);

  using PieceFn = std::function<void(std::string_view)>;
  // Calls onPiece for each piece of `text` in order. `atInputStart`: the stretch begins the
  // whole input (Metaspace's "first" scheme prepends only there, as HF checks offset 0).
  void split(std::string_view text, bool atInputStart, const PieceFn& onPiece) const;

 private:
  struct Step {
    PreTokenizerStep spec;
    std::unique_ptr<RegexSplitter> regex;  // Split only
  };
  void run(std::size_t step, std::string_view piece, bool atInputStart, const PieceFn& onPiece) const;
  void splitByRegex(std::size_t step, std::string_view piece, bool atInputStart, const PieceFn& onPiece) const;

  std::vector<Step> steps_;
};

}  // namespace dfi::tokenizer::detail
