#include "pre_tokenizer.h"

#include "nfc.h"
#include "replace_all.h"

namespace dfi::tokenizer::detail {

std::string_view Normalizer::apply(std::string_view text, std::string& storage) const {
  std::string scratch;
  for (const NormalizerStep& step : steps_) {
    switch (step.kind) {
      case NormalizerStep::Kind::Nfc:
        text = toNfc(text, scratch);
        break;
      case NormalizerStep::Kind::Replace:
        if (text.find(step.pattern) == std::string_view::npos) continue;
        scratch = replaceAll(text, step.pattern, step.content);
        text = scratch;
        break;
      case NormalizerStep::Kind::Prepend:
        if (text.empty()) continue;  // HF prepends to non-empty text only
        scratch = step.content;
        scratch.append(text);
        text = scratch;
        break;
    }
    // `text` may point into `scratch`, which the next step reuses: keep it in `storage`.
    if (text.data() == scratch.data()) {
      storage.swap(scratch);
      text = storage;
    }
  }
  return text;
}

PreTokenizer::PreTokenizer(const std::vector<PreTokenizerStep>& steps, const std::filesystem::path& source) {
  for (const PreTokenizerStep& spec : steps) {
    if (spec.kind == PreTokenizerStep::Kind::ByteLevel) continue;  // BPE's byte alphabet does its work
    Step step{.spec = spec};
    if (spec.kind == PreTokenizerStep::Kind::Split) step.regex = std::make_unique<RegexSplitter>(spec.pattern, source, spec.field);
    steps_.push_back(std::move(step));
  }
}

void PreTokenizer::split(std::string_view text, bool atInputStart, const PieceFn& onPiece) const {
  if (!text.empty()) run(0, text, atInputStart, onPiece);
}

// Pieces are substrings of `piece` that follow each other, so joining two is widening a view.
void PreTokenizer::splitByRegex(std::size_t index, std::string_view piece, bool atInputStart, const PieceFn& onPiece) const {
  const Step& step = steps_[index];
  // HF's "first" is by offset: only a part that begins where the input begins (a part
  // removed there leaves none that does).
  auto emit = [&](std::string_view part) { run(index + 1, part, atInputStart && part.data() == piece.data(), onPiece); };
  auto join = [](std::string_view a, std::string_view b) { return std::string_view(a.data(), a.size() + b.size()); };
  // HF folds the list of (part, isMatch); here the same fold runs as the parts come.
  std::string_view held;  // a part that the next one may still join
  bool heldIsMatch = false, previousMatch = false;
  step.regex->split(piece, [&](std::string_view part, bool isMatch) {
    isMatch = isMatch != step.spec.invert;
    switch (step.spec.behavior) {
      case SplitBehavior::Isolated: emit(part); break;
      case SplitBehavior::Removed: if (!isMatch) emit(part); break;
      case SplitBehavior::MergedWithPrevious:
        // A match joins the part before it, unless that part was a match too.
        if (isMatch && !previousMatch && !held.empty()) {
          held = join(held, part);
        } else {
          if (!held.empty()) emit(held);
          held = part;
        }
        break;
      case SplitBehavior::MergedWithNext:
        // A match joins the part after it when that part is not a match.
        if (heldIsMatch && !isMatch) {
          emit(join(held, part));
          held = {};
          heldIsMatch = false;
        } else {
          if (!held.empty()) emit(held);
          held = part;
          heldIsMatch = isMatch;
        }
        break;
      case SplitBehavior::Contiguous:
        if (isMatch && previousMatch) {
          held = join(held, part);
        } else {
          if (!held.empty()) emit(held);
          held = part;
        }
        break;
    }
    previousMatch = isMatch;
  });
  if (!held.empty()) emit(held);
}

void PreTokenizer::run(std::size_t index, std::string_view piece, bool atInputStart, const PieceFn& onPiece) const {
  if (index == steps_.size()) return onPiece(piece);
  const Step& step = steps_[index];
  if (step.regex) return splitByRegex(index, piece, atInputStart, onPiece);
  // Metaspace: spaces become the replacement, which is prepended per the scheme unless the
  // piece starts with it already, then each replacement starts a new piece.
  const PreTokenizerStep& meta = step.spec;
  std::string text = replaceAll(piece, " ", meta.replacement);
  const bool prepend = meta.prependScheme == PrependScheme::Always ||
                       (meta.prependScheme == PrependScheme::First && atInputStart);
  if (prepend && !text.empty() && !std::string_view(text).starts_with(meta.replacement)) text.insert(0, meta.replacement);
  if (!meta.split) return run(index + 1, text, atInputStart, onPiece);
  const std::string_view all = text;
  std::size_t begin = 0;
  bool first = atInputStart;
  for (std::size_t hit = all.find(meta.replacement, 1); hit != std::string_view::npos;
       hit = all.find(meta.replacement, hit + meta.replacement.size())) {
    if (hit > begin) {
      run(index + 1, all.substr(begin, hit - begin), first, onPiece);
      first = false;
      begin = hit;
    }
  }
  if (begin < all.size()) run(index + 1, all.substr(begin), first, onPiece);
}

}  // namespace dfi::tokenizer::detail
