#pragma once
// Token-by-token decoding for live display: text is released only once no later token can
// change it, so a character split over several byte tokens (CJK, emoji) appears whole, never as
// U+FFFD halves. Invariant: the concatenation of every push() and the final flush() equals
// Tokenizer::decode() of all the ids pushed (with the same skipSpecial): both run the same
// decoder steps (decoder_chain.h).

#include <cstdint>
#include <memory>
#include <string>

#include "dfi/tokenizer/tokenizer.h"

namespace dfi::tokenizer {

class IncrementalDecoder {
 public:
  // Keeps a copy of `tokenizer` (cheap: the tables are shared).
  explicit IncrementalDecoder(Tokenizer tokenizer, bool skipSpecial = false);
  IncrementalDecoder(const IncrementalDecoder& other);
  IncrementalDecoder& operator=(const IncrementalDecoder& other);
  IncrementalDecoder(IncrementalDecoder&&) noexcept;
  IncrementalDecoder& operator=(IncrementalDecoder&&) noexcept;
  ~IncrementalDecoder();

  // Adds one token and returns the text that became final (possibly empty).
  std::string push(std::int32_t id);
  // Returns what is still pending, decoded as the end of the text (an unfinished character as
  // U+FFFD), and starts over.
  std::string flush();
  // Bytes held back: an unfinished character (0 to 3 bytes) of a byte-level tokenizer, or the
  // <0xNN> run so far of a byte-fallback one.
  std::size_t pendingBytes() const;

 private:
  struct State;
  Tokenizer tokenizer_;
  bool skipSpecial_;
  std::unique_ptr<State> state_;
};

}  // namespace dfi::tokenizer
