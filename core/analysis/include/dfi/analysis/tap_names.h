#pragma once
// Which tensor of an external dump (a training pipeline's, transformers') stands for which
// tensor of the engine's own dump (`dflash-eval forward` / `draft`). Used by diff-dump.
//
// Rules, in order of precedence (each tensor is paired at most once):
//   1. explicit mappings THEIR=OUR (--map);
//   2. the same name on both sides;
//   3. transformers' output_hidden_states naming: `hidden_states.<k>` (or `hidden_states_<k>`)
//      is the output of decoder layer k-1, our `hidden.<k-1>`; `hidden_states.0` (the
//      embeddings) has no counterpart. When the dump holds the whole tuple (indices 0..L
//      without a gap, as transformers returns it), the last one, `hidden_states.<L>`, is taken
//      after the final norm and pairs with our `final_hidden` (unless our dump holds a
//      `hidden.<j>` with j >= L, which shows the tuple is not the whole model);
//      `last_hidden_state` pairs with `final_hidden` too.
// Everything else is unmatched and reported.

#include <string>
#include <string_view>
#include <vector>

namespace dfi::analysis {

struct TapMapping {
  std::string theirs;
  std::string ours;
};

// "THEIR=OUR" (split at the last '='); throws dfi::UsageError naming --map otherwise.
TapMapping parseTapMapping(std::string_view text);

struct TapNames {
  std::string file;  // for error messages
  std::vector<std::string> names;
};

struct TapPair {
  std::string ours;
  std::string theirs;
  std::string rule;  // "map", "name", "hidden_states", "last_hidden_state"
};

struct TapMatching {
  std::vector<TapPair> pairs;                  // in natural order of our names
  std::vector<std::string> unmatchedOurs;      // natural order ("hidden.2" before "hidden.10")
  std::vector<std::string> unmatchedTheirs;
};

// Throws dfi::UsageError naming the file and tensor when a mapping names a tensor that file
// does not hold, or when two mappings claim the same tensor.
TapMatching matchTapNames(const TapNames& ours, const TapNames& theirs, const std::vector<TapMapping>& mappings);

// Order of names with their digit runs compared as numbers: "hidden.2" < "hidden.10".
bool naturalLess(std::string_view a, std::string_view b);

}  // namespace dfi::analysis
