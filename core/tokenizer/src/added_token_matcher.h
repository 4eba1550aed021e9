#pragma once
// Finds added tokens (<|im_start|>, <think>...) in raw text: leftmost match first and, among
// matches starting there, the longest, as HF tokenizers does with its Aho-Corasick automaton.
// A byte trie suffices for the few dozen tokens a model has. Internal to dfi_tokenizer.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace dfi::tokenizer::detail {

struct AddedTokenMatch {
  std::size_t begin;
  std::size_t length;
  std::int32_t id;
};

class AddedTokenMatcher {
 public:
  void add(std::string_view content, std::int32_t id);
  // The first match at or after `from`, if any.
  std::optional<AddedTokenMatch> findNext(std::string_view text, std::size_t from) const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, std::int32_t>> children;  // byte -> node index
    std::int32_t tokenId = -1;                                     // a token ends here
  };
  std::int32_t child(std::int32_t node, unsigned char byte) const;
  std::vector<Node> nodes_{Node{}};
  std::array<bool, 256> isFirstByte_{};
};

}  // namespace dfi::tokenizer::detail
