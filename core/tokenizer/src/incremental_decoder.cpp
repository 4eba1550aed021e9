#include "dfi/tokenizer/incremental_decoder.h"

#include "dfi/base/utf8.h"

namespace dfi::tokenizer {

IncrementalDecoder::IncrementalDecoder(Tokenizer tokenizer, bool skipSpecial)
    : tokenizer_(std::move(tokenizer)), skipSpecial_(skipSpecial) {}

std::string IncrementalDecoder::push(std::int32_t id) {
  if (skipSpecial_ && tokenizer_.isSpecial(id)) return {};
  pending_ += tokenizer_.tokenText(id);
  // Everything before a well-formed but unfinished tail is final: later bytes cannot change
  // how it decodes, invalid bytes included (each maximal ill-formed part is already decided).
  const std::size_t keep = utf8::incompleteTailLength(pending_);
  std::string ready = utf8::decodeLossy(std::string_view(pending_).substr(0, pending_.size() - keep));
  pending_.erase(0, pending_.size() - keep);
  return ready;
}

std::string IncrementalDecoder::flush() {
  std::string rest = utf8::decodeLossy(pending_);
  pending_.clear();
  return rest;
}

}  // namespace dfi::tokenizer
