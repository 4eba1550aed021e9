#include "added_token_matcher.h"

namespace dfi::tokenizer::detail {

std::int32_t AddedTokenMatcher::child(std::int32_t node, unsigned char byte) const {
  for (const auto& [b, next] : nodes_[node].children)
    if (b == byte) return next;
  return -1;
}

void AddedTokenMatcher::add(std::string_view content, std::int32_t id) {
  std::int32_t node = 0;
  for (const char c : content) {
    const auto byte = static_cast<unsigned char>(c);
    std::int32_t next = child(node, byte);
    if (next < 0) {
      next = static_cast<std::int32_t>(nodes_.size());
      nodes_[node].children.emplace_back(byte, next);
      nodes_.emplace_back();
    }
    node = next;
  }
  nodes_[node].tokenId = id;
  if (!content.empty()) isFirstByte_[static_cast<unsigned char>(content[0])] = true;
}

std::optional<AddedTokenMatch> AddedTokenMatcher::findNext(std::string_view text, std::size_t from) const {
  for (std::size_t start = from; start < text.size(); ++start) {
    if (!isFirstByte_[static_cast<unsigned char>(text[start])]) continue;
    std::optional<AddedTokenMatch> longest;
    std::int32_t node = 0;
    for (std::size_t i = start; i < text.size(); ++i) {
      node = child(node, static_cast<unsigned char>(text[i]));
      if (node < 0) break;
      if (nodes_[node].tokenId >= 0) longest = AddedTokenMatch{start, i + 1 - start, nodes_[node].tokenId};
    }
    if (longest) return longest;
  }
  return std::nullopt;
}

}  // namespace dfi::tokenizer::detail
