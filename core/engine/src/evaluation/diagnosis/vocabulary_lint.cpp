#include "evaluation/diagnosis/vocabulary_lint.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dfi/tensorfile/checkpoint.h"
#include "dfi/tensorfile/element_values.h"

namespace dfi::engine {
namespace {

namespace fs = std::filesystem;
using tensorfile::DType;

// Rows checked, evenly spaced: enough to tell a wrong mapping (which moves nearly every row) at
// a few MB read whatever the vocabulary.
constexpr std::int64_t kRowsChecked = 512;

bool storedAsFloats(DType dtype) { return dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16; }

class Rows {
 public:
  Rows(const tensorfile::TensorView& view, std::int64_t width) : view_(view), width_(width) {}
  std::vector<double> row(std::int64_t i) const {
    std::vector<double> out(static_cast<std::size_t>(width_));
    tensorfile::readElements(view_, i * width_, out);
    return out;
  }

 private:
  const tensorfile::TensorView& view_;
  std::int64_t width_;
};

// Equal up to the coarser of the two stores' rounding (a bf16 copy of an fp32 row).
bool sameRow(const std::vector<double>& a, const std::vector<double>& b) {
  double scale = 0, gap = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, std::abs(b[i]));
    gap = std::max(gap, std::abs(a[i] - b[i]));
  }
  return gap <= 1e-2 * scale;
}

}  // namespace

std::optional<analysis::LintFinding> draftVocabularyLint(const modelspec::DrafterConfig& drafter, const fs::path& drafterDir,
                                                         const fs::path& targetDir) {
  if (!drafter.draftVocabSize) return std::nullopt;
  const auto own = tensorfile::Checkpoint::open(drafterDir, tensorfile::NameMapping::dflashDrafter());
  const auto served = tensorfile::Checkpoint::open(targetDir);
  const std::string headName = served.contains("lm_head.weight") ? "lm_head.weight" : "model.embed_tokens.weight";
  const std::int64_t vd = *drafter.draftVocabSize, h = drafter.hiddenSize;
  if (!own.contains("lm_head.weight") || !own.contains("d2t") || !served.contains(headName)) return std::nullopt;
  const tensorfile::TensorView ownHead = own.tensor("lm_head.weight"), targetHead = served.tensor(headName);
  if (!storedAsFloats(ownHead.info().dtype) || !storedAsFloats(targetHead.info().dtype) ||
      ownHead.info().shape != std::vector<std::int64_t>{vd, h} || targetHead.info().shape.size() != 2 ||
      targetHead.info().shape[1] != h || own.info("d2t").shape != std::vector<std::int64_t>{vd})
    return std::nullopt;  // shapes the load refuses by name; nothing to add here
  std::vector<double> offsets(static_cast<std::size_t>(vd));
  tensorfile::readElements(own.tensor("d2t"), 0, offsets);

  const Rows ours(ownHead, h), theirs(targetHead, h);
  const std::int64_t targetRows = targetHead.info().shape[0];
  std::int64_t checked = 0, mapped = 0, identity = 0;
  const std::int64_t step = std::max<std::int64_t>(1, vd / kRowsChecked);
  for (std::int64_t i = 0; i < vd; i += step) {
    const auto id = static_cast<std::int64_t>(i + offsets[static_cast<std::size_t>(i)]);
    if (id < 0 || id >= targetRows) return std::nullopt;  // the load names an id outside the vocabulary
    const std::vector<double> row = ours.row(i);
    ++checked;
    mapped += sameRow(row, theirs.row(id));
    identity += sameRow(row, theirs.row(i));
  }
  if (mapped == checked) return std::nullopt;
  std::string message = std::to_string(checked - mapped) + " of " + std::to_string(checked) +
                        " rows checked of the drafter's lm_head differ from the target's LM head at the ids d2t maps "
                        "them to (speculators copies those rows and freezes them)";
  message += identity > mapped ? "; " + std::to_string(identity) + " equal the target's rows at ids 0.." +
                                     std::to_string(vd - 1) +
                                     ": the d2t shipped is probably not the mapping the head was made with "
                                     "(vocab-map:identity measures it)"
                               : ": the head was trained or the mapping is another one (lm-head:target measures "
                                 "the target's head instead)";
  return analysis::LintFinding{analysis::LintSeverity::Warning, "draft-vocabulary-rows",
                               (drafterDir / "model.safetensors").string() + ": lm_head.weight", message + "."};
}

}  // namespace dfi::engine
