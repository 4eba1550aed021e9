#include "decoder_chain.h"

#include "dfi/base/utf8.h"
#include "replace_all.h"

namespace dfi::tokenizer::detail {
namespace {

using Kind = DecoderStep::Kind;

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

int byteFallbackValue(std::string_view token) {
  // HF checks the shape "<0x..>" (6 bytes) and parses the two characters with Rust's
  // u8::from_str_radix, which also takes a '+' sign before one digit.
  if (token.size() != 6 || !token.starts_with("<0x") || token.back() != '>') return -1;
  if (token[3] == '+') return hexDigit(token[4]);
  const int hi = hexDigit(token[3]), lo = hexDigit(token[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::size_t DecoderChain::State::heldBytes() const {
  std::size_t n = 0;
  for (const Step& s : steps) n += s.bytes.size();
  return n;
}

DecoderChain::DecoderChain(std::vector<DecoderStep> steps) : steps_(std::move(steps)), afterFuse_(steps_.size()) {
  bool fused = false;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    afterFuse_[i] = fused;
    fused = fused || steps_[i].kind == Kind::Fuse;
  }
}

void DecoderChain::feed(State& state, std::string_view token, std::string& out) const {
  push(state, 0, std::string(token), out);
}

void DecoderChain::finish(State& state, std::string& out) const {
  // In step order, so that what a step lets go still passes through the steps after it.
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    State::Step& s = state.steps[i];
    if (steps_[i].kind == Kind::ByteLevel) {
      std::string rest = utf8::decodeLossy(s.bytes);
      s.bytes.clear();
      push(state, i + 1, std::move(rest), out);
    } else if (steps_[i].kind == Kind::ByteFallback) {
      flushRun(state, i, out);
    }
  }
}

void DecoderChain::flushRun(State& state, std::size_t step, std::string& out) const {
  std::string run = std::move(state.steps[step].bytes);
  state.steps[step].bytes.clear();
  if (run.empty()) return;
  if (!utf8::firstInvalidByte(run)) return push(state, step + 1, std::move(run), out);
  // Not UTF-8 as a whole: HF gives every byte of the run its own U+FFFD.
  for (std::size_t i = 0; i < run.size(); ++i) push(state, step + 1, std::string(utf8::kReplacement), out);
}

void DecoderChain::push(State& state, std::size_t step, std::string text, std::string& out) const {
  if (step == steps_.size()) {
    out += text;
    return;
  }
  const DecoderStep& d = steps_[step];
  State::Step& s = state.steps[step];
  switch (d.kind) {
    case Kind::ByteLevel: {
      // Bytes up to an unfinished character are final: later bytes cannot change them.
      s.bytes += text;
      const std::size_t keep = utf8::incompleteTailLength(s.bytes);
      std::string ready = utf8::decodeLossy(std::string_view(s.bytes).substr(0, s.bytes.size() - keep));
      s.bytes.erase(0, s.bytes.size() - keep);
      return push(state, step + 1, std::move(ready), out);
    }
    case Kind::Replace:
      return push(state, step + 1, replaceAll(text, d.pattern, d.content), out);
    case Kind::ByteFallback:
      if (const int byte = byteFallbackValue(text); byte >= 0) {
        s.bytes.push_back(static_cast<char>(byte));
        return;
      }
      flushRun(state, step, out);
      return push(state, step + 1, std::move(text), out);
    case Kind::Fuse:
      // Concatenation is what follows anyway; the steps after a Fuse know they see one text.
      return push(state, step + 1, std::move(text), out);
    case Kind::Strip: {
      const bool wholeText = afterFuse_[step];
      std::size_t stripped = wholeText ? s.count : 0;
      std::size_t pos = 0;
      if (!(wholeText && s.done)) {
        while (stripped < d.start && text.compare(pos, d.content.size(), d.content) == 0) {
          pos += d.content.size();
          ++stripped;
        }
        // The text goes on with something else (or the limit is reached): nothing more to strip.
        if (wholeText && (pos < text.size() || stripped == d.start)) s.done = true;
      }
      if (wholeText) s.count = stripped;
      return push(state, step + 1, text.substr(pos), out);
    }
    case Kind::Metaspace: {
      // HF drops the replacement everywhere in the first token (not only in front), unless the
      // scheme is Never; elsewhere it becomes a space.
      const bool first = s.count++ == 0;
      const bool drop = first && d.prependScheme != PrependScheme::Never;
      std::string replaced = replaceAll(text, d.replacement, drop ? "" : " ");
      return push(state, step + 1, std::move(replaced), out);
    }
  }
}

std::string DecoderChain::tokenText(std::string_view token) const {
  std::string out(token);
  for (const DecoderStep& d : steps_) {
    switch (d.kind) {
      case Kind::ByteLevel: break;  // `token` is already the token's bytes
      case Kind::Replace: out = replaceAll(out, d.pattern, d.content); break;
      case Kind::Metaspace: out = replaceAll(out, d.replacement, " "); break;
      case Kind::ByteFallback:
        if (const int byte = byteFallbackValue(out); byte >= 0) out = std::string(1, static_cast<char>(byte));
        break;
      case Kind::Fuse:
      case Kind::Strip: break;  // they act on the text around the token
    }
  }
  return out;
}

}  // namespace dfi::tokenizer::detail
