#pragma once
// Token-by-token decoding for live display: text is released only once its UTF-8 is complete,
// so a character split over several byte tokens (CJK, emoji) appears whole, never as U+FFFD
// halves. Invariant: the concatenation of every push() and the final flush() equals
// Tokenizer::decode() of all the ids pushed (with the same skipSpecial).

#include <cstdint>
#include <string>

#include "dfi/tokenizer/tokenizer.h"

namespace dfi::tokenizer {

class IncrementalDecoder {
 public:
  // Keeps a copy of `tokenizer` (cheap: the tables are shared).
  explicit IncrementalDecoder(Tokenizer tokenizer, bool skipSpecial = false);

  // Adds one token and returns the text that became complete (possibly empty).
  std::string push(std::int32_t id);
  // Returns what is still pending, with an unfinished character replaced by U+FFFD, and
  // starts over.
  std::string flush();
  // Bytes held back because they do not yet form a whole character (0 to 3).
  std::size_t pendingBytes() const { return pending_.size(); }

 private:
  Tokenizer tokenizer_;
  bool skipSpecial_;
  std::string pending_;
};

}  // namespace dfi::tokenizer
