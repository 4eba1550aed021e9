#include "dfi/analysis/tap_names.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "dfi/base/error.h"

namespace dfi::analysis {
namespace {

// k of "<prefix><k>" (k a plain decimal number), nullopt for any other name.
std::optional<int> indexAfter(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return std::nullopt;
  const std::string_view digits = name.substr(prefix.size());
  if (digits.size() > 1 && digits.front() == '0') return std::nullopt;
  int k = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
  if (error != std::errc() || end != digits.data() + digits.size() || k < 0) return std::nullopt;
  return k;
}

// k of "hidden_states.<k>" / "hidden_states_<k>", nullopt for any other name.
std::optional<int> hiddenStatesIndex(std::string_view name) {
  if (auto k = indexAfter(name, "hidden_states.")) return k;
  return indexAfter(name, "hidden_states_");
}

// L when `names` holds hidden_states.0 .. hidden_states.L without a gap (the whole tuple).
std::optional<int> wholeTupleLast(const std::vector<std::string>& names) {
  std::set<int> indices;
  for (const std::string& name : names)
    if (auto k = hiddenStatesIndex(name)) indices.insert(*k);
  if (indices.size() < 2 || *indices.begin() != 0) return std::nullopt;
  const int last = *indices.rbegin();
  if (static_cast<std::size_t>(last) + 1 != indices.size()) return std::nullopt;
  return last;
}

std::vector<std::string> sortedNaturally(std::vector<std::string> names) {
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) { return naturalLess(a, b); });
  return names;
}

}  // namespace

bool naturalLess(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool digitA = a[i] >= '0' && a[i] <= '9';
    const bool digitB = b[j] >= '0' && b[j] <= '9';
    if (digitA && digitB) {
      std::size_t endA = i, endB = j;
      while (endA < a.size() && a[endA] >= '0' && a[endA] <= '9') ++endA;
      while (endB < b.size() && b[endB] >= '0' && b[endB] <= '9') ++endB;
      // Compare as numbers without overflow: strip leading zeros, then length, then digits.
      std::string_view numA = a.substr(i, endA - i), numB = b.substr(j, endB - j);
      const auto trimA = numA.find_first_not_of('0'), trimB = numB.find_first_not_of('0');
      numA = trimA == std::string_view::npos ? std::string_view{} : numA.substr(trimA);
      numB = trimB == std::string_view::npos ? std::string_view{} : numB.substr(trimB);
      if (numA.size() != numB.size()) return numA.size() < numB.size();
      if (numA != numB) return numA < numB;
      i = endA;
      j = endB;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;
}

TapMapping parseTapMapping(std::string_view text) {
  const auto eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError("expected THEIR=OUR (a tensor name of each dump), got '" + std::string(text) + "'",
                     {.item = "--map"});
  return {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

TapMatching matchTapNames(const TapNames& ours, const TapNames& theirs, const std::vector<TapMapping>& mappings) {
  const std::set<std::string, std::less<>> ourSet(ours.names.begin(), ours.names.end());
  const std::set<std::string, std::less<>> theirSet(theirs.names.begin(), theirs.names.end());
  std::map<std::string, TapPair, std::less<>> byOurs;  // our name -> pair
  std::set<std::string, std::less<>> pairedTheirs;

  for (const TapMapping& m : mappings) {
    if (!theirSet.contains(m.theirs))
      throw UsageError("--map " + m.theirs + "=" + m.ours + ": no tensor '" + m.theirs + "' in this file",
                       {.file = theirs.file, .item = m.theirs});
    if (!ourSet.contains(m.ours))
      throw UsageError("--map " + m.theirs + "=" + m.ours + ": no tensor '" + m.ours + "' in this file",
                       {.file = ours.file, .item = m.ours});
    if (pairedTheirs.contains(m.theirs))
      throw UsageError("--map names '" + m.theirs + "' twice", {.file = theirs.file, .item = m.theirs});
    if (byOurs.contains(m.ours))
      throw UsageError("--map pairs '" + m.ours + "' with both '" + byOurs[m.ours].theirs + "' and '" + m.theirs + "'",
                       {.file = ours.file, .item = m.ours});
    byOurs[m.ours] = {m.ours, m.theirs, "map"};
    pairedTheirs.insert(m.theirs);
  }
  auto tryPair = [&](const std::string& their, const std::string& our, const char* rule) {
    if (pairedTheirs.contains(their) || byOurs.contains(our) || !ourSet.contains(our)) return;
    byOurs[our] = {our, their, rule};
    pairedTheirs.insert(their);
  };
  for (const std::string& their : theirs.names) tryPair(their, their, "name");
  std::optional<int> last = wholeTupleLast(theirs.names);
  // Our hidden.<j> with j >= L: their tuple stops before the model's last layer (a truncated
  // model or a partial dump), so its last entry is a raw layer output, not the final norm.
  for (const std::string& name : ours.names)
    if (const auto j = indexAfter(name, "hidden."); last && j && *j >= *last) last.reset();
  for (const std::string& their : theirs.names) {
    if (their == "last_hidden_state") tryPair(their, "final_hidden", "last_hidden_state");
    const std::optional<int> k = hiddenStatesIndex(their);
    if (!k || *k == 0) continue;
    if (last && *k == *last)
      tryPair(their, "final_hidden", "hidden_states");
    else
      tryPair(their, "hidden." + std::to_string(*k - 1), "hidden_states");
  }

  TapMatching out;
  std::vector<std::string> ourNames;
  for (auto& [name, pair] : byOurs) ourNames.push_back(name);
  for (const std::string& name : sortedNaturally(ourNames)) out.pairs.push_back(byOurs[name]);
  for (const std::string& name : ours.names)
    if (!byOurs.contains(name)) out.unmatchedOurs.push_back(name);
  for (const std::string& name : theirs.names)
    if (!pairedTheirs.contains(name)) out.unmatchedTheirs.push_back(name);
  out.unmatchedOurs = sortedNaturally(std::move(out.unmatchedOurs));
  out.unmatchedTheirs = sortedNaturally(std::move(out.unmatchedTheirs));
  return out;
}

}  // namespace dfi::analysis
