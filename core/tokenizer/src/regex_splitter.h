#pragma once
// The Split pre-tokenizer with "Isolated" behaviour: every regex match becomes a piece, and so
// does every non-empty gap between matches. Runs on PCRE2 compiled with UTF and Unicode
// properties (\p{L}, \s...) and JIT, because the Qwen patterns need look-ahead.
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

  // Calls onPiece for each piece of `text` (valid UTF-8), in order.
  void split(std::string_view text, const std::function<void(std::string_view)>& onPiece) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace dfi::tokenizer::detail
