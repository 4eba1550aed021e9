#include "dfi/tokenizer/incremental_decoder.h"

#include "decoder_chain.h"
#include "tokenizer_impl.h"

namespace dfi::tokenizer {

struct IncrementalDecoder::State {
  detail::DecoderChain::State chain;
};

IncrementalDecoder::IncrementalDecoder(Tokenizer tokenizer, bool skipSpecial)
    : tokenizer_(std::move(tokenizer)),
      skipSpecial_(skipSpecial),
      state_(std::make_unique<State>(State{tokenizer_.impl_->decoder.start()})) {}

IncrementalDecoder::IncrementalDecoder(const IncrementalDecoder& other)
    : tokenizer_(other.tokenizer_), skipSpecial_(other.skipSpecial_), state_(std::make_unique<State>(*other.state_)) {}

IncrementalDecoder& IncrementalDecoder::operator=(const IncrementalDecoder& other) {
  if (this != &other) *this = IncrementalDecoder(other);
  return *this;
}

IncrementalDecoder::IncrementalDecoder(IncrementalDecoder&&) noexcept = default;
IncrementalDecoder& IncrementalDecoder::operator=(IncrementalDecoder&&) noexcept = default;
IncrementalDecoder::~IncrementalDecoder() = default;

std::string IncrementalDecoder::push(std::int32_t id) {
  const Tokenizer::Impl& impl = *tokenizer_.impl_;
  if (!impl.known(id) || (skipSpecial_ && impl.kinds[id] == Tokenizer::Impl::Kind::Special)) return {};
  std::string ready;
  impl.decoder.feed(state_->chain, impl.decoderInput(id), ready);
  return ready;
}

std::string IncrementalDecoder::flush() {
  const Tokenizer::Impl& impl = *tokenizer_.impl_;
  std::string rest;
  impl.decoder.finish(state_->chain, rest);
  state_->chain = impl.decoder.start();
  return rest;
}

std::size_t IncrementalDecoder::pendingBytes() const { return state_->chain.heldBytes(); }

}  // namespace dfi::tokenizer
