#pragma once
// The decoder steps of a tokenizer (tokenizer_spec.h), run as a stream: tokens go in one at a
// time and text comes out as soon as no later token can change it. Tokenizer::decode feeds all
// ids and finishes; IncrementalDecoder feeds them as they are generated. Both run this one
// implementation, so streamed text always equals decoded text.
//
// Each step sees the strings the step before it emits, in order, as HF's decode_chain does
// with its list. What has to wait: a byte-level tail that is not yet a whole character, a run
// of <0xNN> tokens (ByteFallback decides on the whole run), and leading characters a Strip
// after Fuse may still remove. Internal to dfi_tokenizer.

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer_spec.h"

namespace dfi::tokenizer::detail {

class DecoderChain {
 public:
  struct State {
    struct Step {
      std::string bytes;      // ByteLevel: unfinished character; ByteFallback: the run so far
      std::size_t count = 0;  // Metaspace: tokens seen; Strip after Fuse: characters stripped
      bool done = false;      // Strip after Fuse: the text no longer starts with `content`
    };
    std::vector<Step> steps;
    std::size_t heldBytes() const;
  };

  explicit DecoderChain(std::vector<DecoderStep> steps);

  State start() const { return State{std::vector<State::Step>(steps_.size())}; }
  // `token`: for the ByteLevel decoder the token's bytes, otherwise its string.
  void feed(State& state, std::string_view token, std::string& out) const;
  void finish(State& state, std::string& out) const;

  // The text of one token out of context (not first, no run): what display and tokenText show.
  std::string tokenText(std::string_view token) const;

 private:
  void push(State& state, std::size_t step, std::string text, std::string& out) const;
  void flushRun(State& state, std::size_t step, std::string& out) const;

  std::vector<DecoderStep> steps_;
  std::vector<bool> afterFuse_;  // by step: a Fuse comes before it
};

// The byte of a <0xNN> token as HF's ByteFallback decoder reads it, or -1.
int byteFallbackValue(std::string_view token);

}  // namespace dfi::tokenizer::detail
