#pragma once
// Literal find-and-replace shared by the Replace normalizer, Metaspace and the Replace decoder.
// Internal to dfi_tokenizer.

#include <string>
#include <string_view>

namespace dfi::tokenizer::detail {

// Every occurrence of `pattern` (non-empty) in `text` replaced by `content`, left to right,
// as Rust's str::replace does.
inline std::string replaceAll(std::string_view text, std::string_view pattern, std::string_view content) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  for (std::size_t hit; (hit = text.find(pattern, pos)) != std::string_view::npos; pos = hit + pattern.size()) {
    out.append(text.substr(pos, hit - pos));
    out.append(content);
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace dfi::tokenizer::detail
