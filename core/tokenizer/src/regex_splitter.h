#pragma once
// The regex of a Split pre-tokenizer: cuts text into its matches and the gaps between them
// (what the Split then does with them is its behaviour, pre_tokenizer.cpp). Runs on PCRE2 compiled with UTF and Unicode
// properties (\p{L}, \s...) and JIT, because the Qwen patterns need look-ahead. Character-class
// intersections ([A&&B], Kimi) become look-aheads and script names the Script property, so that
// PCRE2 reads the patterns as tiktoken (Rust regex) and HF (Oniguruma) do.
// Internal to dfi_tokenizer.

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace dfi::tokenizer::detail {

class RegexSplitter {
 public:
  // Throws ValidationError naming `sourceFile` and `field` when the pattern does not compile.
  RegexSplitter(const std::string& pattern, const std::filesystem::path& sourceFile, const std::string& field);
  ~RegexSplitter();
  RegexSplitter(RegexSplitter&&) noexcept;
  RegexSplitter& operator=(RegexSplitter&&) noexcept;

  // Calls onPiece for each match and each non-empty gap between matches of `text` (valid
  // UTF-8), in order; `isMatch` tells which. Empty matches are skipped.
  void split(std::string_view text, const std::function<void(std::string_view piece, bool isMatch)>& onPiece) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace dfi::tokenizer::detail
