#include "dfi/analysis/checkpoint_series.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <system_error>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/tensorfile/checkpoint.h"

namespace dfi::analysis {
namespace fs = std::filesystem;
namespace {

std::string lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "40000", "40k", "2.5m" at the start of `text`, which must end there or at a separator.
std::optional<std::int64_t> countAt(std::string_view text) {
  std::size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, value);
  if (end == 0 || ec != std::errc() || ptr != text.data() + end) return std::nullopt;
  double scale = 1;
  if (end < text.size() && (text[end] == 'k' || text[end] == 'm')) scale = text[end++] == 'k' ? 1e3 : 1e6;
  if (end < text.size() && std::isalnum(static_cast<unsigned char>(text[end]))) return std::nullopt;
  const double steps = value * scale;
  if (steps != std::floor(steps)) return std::nullopt;  // 2.5 steps: not a step count
  if (steps >= 9.0e18) return std::nullopt;             // no training run; and past int64
  return static_cast<std::int64_t>(steps);
}

std::optional<std::int64_t> trainerStateStep(const fs::path& dir) {
  std::ifstream in(dir / "trainer_state.json");
  if (!in) return std::nullopt;
  const nlohmann::json state = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (state.is_discarded() || !state.is_object() || !state.contains("global_step") ||
      !state["global_step"].is_number_integer())
    return std::nullopt;
  return state["global_step"].get<std::int64_t>();
}

std::optional<std::int64_t> plainInteger(std::string_view name) {
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), value);
  if (name.empty() || ec != std::errc() || ptr != name.data() + name.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<std::int64_t> stepFromName(std::string_view name) {
  const std::string text = lowered(name);
  for (const std::string_view marker : {"checkpoint", "ckpt", "step"}) {
    const std::size_t at = text.rfind(marker);
    if (at == std::string::npos) continue;
    std::string_view rest = std::string_view(text).substr(at + marker.size());
    if (!rest.empty() && (rest.front() == '-' || rest.front() == '_')) rest.remove_prefix(1);
    if (const auto count = countAt(rest)) return count;
  }
  return std::nullopt;
}

std::string checkpointProblem(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir / "config.json", ec)) {
    if (fs::exists(dir / "training_state.pt", ec))
      return "SpecForge's training state, not a drafter: export it first (python -m specforge.export.to_hf)";
    return "no config.json yet";
  }
  std::ifstream in(dir / "config.json");
  if (nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false).is_discarded())
    return "config.json is not JSON yet (still being written?)";
  try {
    (void)tensorfile::Checkpoint::open(dir, tensorfile::NameMapping::identity());
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

std::vector<SeriesCheckpoint> discoverCheckpoints(const fs::path& folder) {
  std::error_code ec;
  fs::directory_iterator entries(folder, ec);
  if (ec) throw IoError("cannot list the training output folder: " + ec.message(), {.file = folder.string()});
  // Folders by canonical path: a link that aliases one (…-latest, checkpoint_best) is the same
  // checkpoint; a descriptive link (epoch0_step16626) lends its target the step it names.
  std::map<fs::path, SeriesCheckpoint> byTarget;
  std::map<fs::path, std::string> linkNames;
  for (const fs::directory_entry& entry : entries) {
    if (!entry.is_directory(ec)) continue;
    const fs::path target = fs::weakly_canonical(entry.path(), ec);
    const std::string name = entry.path().filename().string();
    if (entry.is_symlink(ec)) {
      if (stepFromName(name)) linkNames[target] = name;
      continue;
    }
    byTarget[target] = {.dir = entry.path()};
  }
  std::vector<SeriesCheckpoint> out;
  for (auto& [target, checkpoint] : byTarget) {
    const std::string name = checkpoint.dir.filename().string();
    const bool isDrafter = fs::exists(checkpoint.dir / "config.json", ec) || fs::exists(checkpoint.dir / "training_state.pt", ec);
    if (!isDrafter) continue;  // logs, runs/, anything else the trainer writes beside
    if (const auto step = trainerStateStep(checkpoint.dir)) {
      checkpoint.step = *step;
      checkpoint.stepSource = "trainer_state.json";
    } else if (const auto named = stepFromName(name)) {
      checkpoint.step = *named;
      checkpoint.stepSource = "name";
    } else if (const auto link = linkNames.find(target); link != linkNames.end()) {
      checkpoint.step = *stepFromName(link->second);
      checkpoint.stepSource = "link " + link->second;
    } else if (const auto epoch = plainInteger(name)) {
      checkpoint.step = *epoch;
      checkpoint.stepSource = "epoch number";
    } else {
      continue;  // a drafter folder without a step (final/, exported/): not part of the series
    }
    out.push_back(std::move(checkpoint));
  }
  if (out.empty())
    throw ValidationError("no checkpoint folder with a step (step<N>, <run>-step<N>, checkpoint-<N>, an epoch "
                          "number with its epoch<E>_step<N> link, or trainer_state.json)",
                          {.file = folder.string()});
  std::ranges::sort(out, [](const SeriesCheckpoint& a, const SeriesCheckpoint& b) {
    return a.step != b.step ? a.step < b.step : a.dir.filename() < b.dir.filename();
  });
  return out;
}

}  // namespace dfi::analysis
