#pragma once
// Per-position differences between the engine's tapped tensors and an external dump of the
// same taps (a training pipeline's, transformers' output_hidden_states): what
// `dflash-eval diff-dump` reports, and what the GUI can overlay. Torch-free: both files are
// read through their memory mappings and compared in double precision.
//
// A tensor's positions are its leading axis once a batch dimension of 1 is set aside ([T, H]
// taps: one position per token; [N, B, H] drafter layers: one per anchor; see alignedShape).
// Per position:
//   max_abs_diff   max |ours - theirs|
//   rms_diff       sqrt(mean((ours - theirs)^2))
//   relative_diff  rms_diff / rms(theirs)  (0 when rms_diff is 0, inf when only rms(theirs) is)
//   cosine         <ours, theirs> / (|ours| |theirs|)  (1 when both are 0, 0 when one is)
// Elements that are NaN or infinite on both sides alike count as equal; any other NaN or
// infinity makes the difference infinite (and the cosine NaN).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dfi/analysis/tap_names.h"
#include "dfi/tensorfile/safetensors_file.h"

namespace dfi::analysis {

struct PositionDiffs {
  std::vector<double> maxAbsDiff;
  std::vector<double> rmsDiff;
  std::vector<double> relativeDiff;
  std::vector<double> cosine;
};

struct TensorDiff {
  std::string ours;    // name in our dump
  std::string theirs;  // name in theirs
  std::string rule;    // how the names were paired (see tap_names.h)
  std::vector<std::int64_t> oursShape, theirsShape;
  std::vector<std::int64_t> shape;  // compared shape (batch dimension set aside)
  std::string oursDtype, theirsDtype;
  PositionDiffs positions;
  double maxAbsDiff = 0;             // over all positions
  double rmsDiff = 0;                // over all elements
  double minCosine = 1;              // worst position
  std::int64_t worstPosition = -1;   // position of maxAbsDiff (first of equals); -1 if empty
  std::int64_t firstOverTolerance = -1;  // first position with max_abs_diff > tolerance, or -1

  bool withinTolerance() const { return firstOverTolerance < 0; }
};

struct TapDiffOptions {
  std::vector<TapMapping> mappings;  // THEIR=OUR pairs beyond the automatic rules
  double tolerance = 1e-4;           // on max_abs_diff
};

struct TapDiffReport {
  std::string oursFile, theirsFile;
  double tolerance = 0;
  std::vector<TensorDiff> tensors;  // natural order of our names
  std::vector<std::string> unmatchedOurs, unmatchedTheirs;

  bool withinTolerance() const;
  std::vector<const TensorDiff*> beyondTolerance() const;
};

// The shape both sides are compared in: the side with one more dimension may have a leading 1
// (a batch of one); equal shapes are compared as they are, except that a leading 1 of both is
// set aside from three dimensions up ([1, T, H] twice: T positions; a [1, B, H] drafter layer
// of one anchor: one position per block slot). nullopt when the shapes do not agree.
std::optional<std::vector<std::int64_t>> alignedShape(const std::vector<std::int64_t>& ours,
                                                      const std::vector<std::int64_t>& theirs);

// Compares two tensors of `shape` (after alignedShape) position by position.
TensorDiff diffTensors(const tensorfile::TensorView& ours, const tensorfile::TensorView& theirs,
                       const std::vector<std::int64_t>& shape, double tolerance);

// Pairs the tensors of both files (tap_names.h) and compares every pair. Throws
// dfi::UsageError for a bad tolerance or mapping, dfi::ValidationError naming the tensor, both
// shapes and both files when a pair's shapes do not agree (every such pair in one message),
// or when no tensor pairs at all.
TapDiffReport diffTapFiles(const tensorfile::SafetensorsFile& ours, const tensorfile::SafetensorsFile& theirs,
                           const TapDiffOptions& options);
// Opens both files first (dfi::IoError / dfi::FormatError naming the file).
TapDiffReport diffTapFiles(const std::filesystem::path& ours, const std::filesystem::path& theirs,
                           const TapDiffOptions& options);

}  // namespace dfi::analysis
