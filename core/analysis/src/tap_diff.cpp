#include "dfi/analysis/tap_diff.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dfi/base/error.h"
#include "dfi/tensorfile/element_values.h"
#include "dfi/tensorfile/shape_text.h"

namespace dfi::analysis {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Sums over one position's elements.
struct RowSums {
  double maxAbs = 0;
  double squaredDiff = 0;
  double squaredTheirs = 0;
  double squaredOurs = 0;
  double dot = 0;
  bool nonFinite = false;  // a NaN or infinity on one side that the other does not share

  void add(double a, double b) {
    if (std::isfinite(a) && std::isfinite(b)) {
      const double d = a - b;
      maxAbs = std::max(maxAbs, std::abs(d));
      squaredDiff += d * d;
      squaredOurs += a * a;
      squaredTheirs += b * b;
      dot += a * b;
    } else if (!((std::isnan(a) && std::isnan(b)) || a == b)) {
      nonFinite = true;
    }
  }
};

double cosineOf(const RowSums& s) {
  if (s.nonFinite) return kNaN;
  if (s.squaredOurs == 0 && s.squaredTheirs == 0) return 1;
  if (s.squaredOurs == 0 || s.squaredTheirs == 0) return 0;
  if (s.squaredDiff == 0) return 1;  // equal rows: exactly 1, not 1 - rounding
  return std::clamp(s.dot / (std::sqrt(s.squaredOurs) * std::sqrt(s.squaredTheirs)), -1.0, 1.0);
}

std::int64_t product(const std::vector<std::int64_t>& shape, std::size_t from) {
  std::int64_t n = 1;
  for (std::size_t i = from; i < shape.size(); ++i) n *= shape[i];
  return n;
}

}  // namespace

bool TapDiffReport::withinTolerance() const {
  return std::all_of(tensors.begin(), tensors.end(), [](const TensorDiff& t) { return t.withinTolerance(); });
}

std::vector<const TensorDiff*> TapDiffReport::beyondTolerance() const {
  std::vector<const TensorDiff*> out;
  for (const TensorDiff& t : tensors)
    if (!t.withinTolerance()) out.push_back(&t);
  return out;
}

std::optional<std::vector<std::int64_t>> alignedShape(const std::vector<std::int64_t>& ours,
                                                      const std::vector<std::int64_t>& theirs) {
  if (ours == theirs) {
    if (ours.size() >= 3 && ours.front() == 1) return std::vector<std::int64_t>(ours.begin() + 1, ours.end());
    return ours;
  }
  const auto stripped = [](const std::vector<std::int64_t>& longer, const std::vector<std::int64_t>& shorter)
      -> std::optional<std::vector<std::int64_t>> {
    if (longer.size() != shorter.size() + 1 || longer.front() != 1) return std::nullopt;
    if (!std::equal(shorter.begin(), shorter.end(), longer.begin() + 1)) return std::nullopt;
    return shorter;
  };
  if (ours.size() > theirs.size()) return stripped(ours, theirs);
  if (theirs.size() > ours.size()) return stripped(theirs, ours);
  return std::nullopt;
}

TensorDiff diffTensors(const tensorfile::TensorView& ours, const tensorfile::TensorView& theirs,
                       const std::vector<std::int64_t>& shape, double tolerance) {
  TensorDiff out;
  out.ours = ours.info().name;
  out.theirs = theirs.info().name;
  out.oursShape = ours.info().shape;
  out.theirsShape = theirs.info().shape;
  out.shape = shape;
  out.oursDtype = std::string(tensorfile::dtypeName(ours.info().dtype));
  out.theirsDtype = std::string(tensorfile::dtypeName(theirs.info().dtype));
  const std::int64_t positions = shape.empty() ? 1 : shape.front();
  const std::int64_t row = product(shape, shape.empty() ? 0 : 1);
  for (auto* v : {&out.positions.maxAbsDiff, &out.positions.rmsDiff, &out.positions.relativeDiff, &out.positions.cosine})
    v->reserve(static_cast<std::size_t>(positions));

  // One position at a time (logits rows can be large; whole tensors need not fit as doubles).
  std::vector<double> a(static_cast<std::size_t>(row)), b(static_cast<std::size_t>(row));
  double totalSquared = 0;
  bool totalNonFinite = false;
  for (std::int64_t p = 0; p < positions; ++p) {
    tensorfile::readElements(ours, p * row, a);
    tensorfile::readElements(theirs, p * row, b);
    RowSums s;
    for (std::size_t i = 0; i < a.size(); ++i) s.add(a[i], b[i]);
    const double n = static_cast<double>(std::max<std::int64_t>(row, 1));
    const double maxAbs = s.nonFinite ? kInf : s.maxAbs;
    const double rms = s.nonFinite ? kInf : std::sqrt(s.squaredDiff / n);
    const double theirRms = std::sqrt(s.squaredTheirs / n);
    const double relative = rms == 0 ? 0 : (theirRms == 0 ? kInf : rms / theirRms);
    out.positions.maxAbsDiff.push_back(maxAbs);
    out.positions.rmsDiff.push_back(rms);
    out.positions.relativeDiff.push_back(relative);
    out.positions.cosine.push_back(cosineOf(s));
    totalSquared += s.squaredDiff;
    totalNonFinite = totalNonFinite || s.nonFinite;
    if (out.worstPosition < 0 || maxAbs > out.maxAbsDiff) {
      out.maxAbsDiff = maxAbs;
      out.worstPosition = p;
    }
    const double cosine = out.positions.cosine.back();
    if (std::isnan(cosine))
      out.minCosine = kNaN;
    else if (!std::isnan(out.minCosine) && cosine < out.minCosine)
      out.minCosine = cosine;
    if (out.firstOverTolerance < 0 && maxAbs > tolerance) out.firstOverTolerance = p;
  }
  const double elements = static_cast<double>(std::max<std::int64_t>(positions * row, 1));
  out.rmsDiff = totalNonFinite ? kInf : std::sqrt(totalSquared / elements);
  return out;
}

TapDiffReport diffTapFiles(const tensorfile::SafetensorsFile& ours, const tensorfile::SafetensorsFile& theirs,
                           const TapDiffOptions& options) {
  if (!(options.tolerance >= 0) || !std::isfinite(options.tolerance))
    throw UsageError("the tolerance must be a finite number >= 0, got " + std::to_string(options.tolerance),
                     {.item = "--tolerance"});
  TapNames ourNames{ours.path().string(), {}}, theirNames{theirs.path().string(), {}};
  for (const auto& t : ours.tensors()) ourNames.names.push_back(t.name);
  for (const auto& t : theirs.tensors()) theirNames.names.push_back(t.name);
  const TapMatching matching = matchTapNames(ourNames, theirNames, options.mappings);
  if (matching.pairs.empty())
    throw ValidationError("no tensor of " + theirNames.file + " pairs with one of " + ourNames.file +
                              " (by name, transformers' hidden_states.<k>, or --map THEIR=OUR)",
                          {.file = theirNames.file});

  // Every shape disagreement in one message, before any comparison runs.
  std::string mismatches;
  const std::string* firstMismatch = nullptr;
  std::vector<std::vector<std::int64_t>> shapes;
  for (const TapPair& pair : matching.pairs) {
    const auto& ourShape = ours.find(pair.ours)->shape;
    const auto& theirShape = theirs.find(pair.theirs)->shape;
    if (auto shape = alignedShape(ourShape, theirShape)) {
      shapes.push_back(*shape);
      continue;
    }
    if (!firstMismatch) firstMismatch = &pair.ours;
    mismatches += "\n  " + pair.ours + (pair.theirs == pair.ours ? "" : " <- " + pair.theirs) + ": ours " +
                  tensorfile::shapeToString(ourShape) + " in " + ourNames.file + ", theirs " +
                  tensorfile::shapeToString(theirShape) + " in " + theirNames.file;
  }
  if (firstMismatch)
    throw ValidationError("shapes do not agree (a leading batch dimension of 1 is allowed on either side):" + mismatches,
                          {.file = theirNames.file, .item = *firstMismatch});

  TapDiffReport report;
  report.oursFile = ourNames.file;
  report.theirsFile = theirNames.file;
  report.tolerance = options.tolerance;
  report.unmatchedOurs = matching.unmatchedOurs;
  report.unmatchedTheirs = matching.unmatchedTheirs;
  for (std::size_t i = 0; i < matching.pairs.size(); ++i) {
    const TapPair& pair = matching.pairs[i];
    TensorDiff diff = diffTensors(ours.view(pair.ours), theirs.view(pair.theirs), shapes[i], options.tolerance);
    diff.rule = pair.rule;
    report.tensors.push_back(std::move(diff));
  }
  return report;
}

TapDiffReport diffTapFiles(const std::filesystem::path& ours, const std::filesystem::path& theirs,
                           const TapDiffOptions& options) {
  const auto ourFile = tensorfile::SafetensorsFile::open(ours);
  const auto theirFile = tensorfile::SafetensorsFile::open(theirs);
  return diffTapFiles(ourFile, theirFile, options);
}

}  // namespace dfi::analysis
