#pragma once
// What the mask view draws, as a value: the rows (queries) and columns (keys) of one mask
// picture and the value and explanation of every cell. Qt-free and immutable, so the
// heatmap's worker threads can sample it while the GUI thread describes hovered cells.
//
// Columns are laid out by meaning, not by one variant's key index, so two variants can be
// diffed cell by cell: in the inference layout the context columns are positions 0..anchor
// (the anchor's column is a key only in the anchor-visible variant), then the B block slots.
// In the training layout every variant has the same keys: T context positions, then N blocks.

#include <cstdint>
#include <optional>
#include <vector>

#include "dfi/analysis/attention_mask.h"

namespace dfi::ui {

enum class MaskLayoutKind { Inference, Training };

struct MaskScene {
  MaskLayoutKind layout = MaskLayoutKind::Inference;
  analysis::MaskSpec spec;                              // variant A, layer type, B, window
  std::optional<analysis::MaskVariant> diffAgainst;     // variant B of a diff
  std::int64_t anchor = 0;                              // inference layout
  std::vector<std::int64_t> anchors;                    // training layout, ascending
  std::int64_t sequenceLength = 0;                      // training layout: T
};

// Cell values drawn by the heatmap.
enum MaskValue : int { kMasked = 0, kAllowed = 1 };                            // single variant
enum MaskDiffValue : int { kBothMasked = 0, kBothAllowed = 1, kDiffer = 2 };  // diff mode

struct MaskCellInfo {
  std::int64_t block = 0;          // the query's block (always 0 in the inference layout)
  int querySlot = 0;
  std::int64_t queryPosition = 0;  // sequence position of the query slot (variant A)
  bool keyIsContext = true;
  std::int64_t keyPosition = 0;    // sequence position of the key (variant A)
  std::int64_t keyBlock = 0;       // block keys only
  int keySlot = 0;                 // block keys only
  analysis::MaskCell a;
  std::optional<analysis::MaskCell> b;  // diff mode
};

class MaskLayout {
 public:
  // Throws dfi::UsageError when the scene cannot be drawn (block size < 1, anchor outside
  // the sequence, more than kMaxExtent rows or columns).
  explicit MaskLayout(MaskScene scene);

  static constexpr std::int64_t kMaxExtent = 1 << 20;

  const MaskScene& scene() const { return scene_; }
  bool isDiff() const { return scene_.diffAgainst.has_value(); }
  std::int64_t rows() const { return rows_; }
  std::int64_t columns() const { return columns_; }
  std::int64_t contextColumns() const { return contextColumns_; }  // first block column

  int value(std::int64_t row, std::int64_t column) const;  // MaskValue or MaskDiffValue
  MaskCellInfo describe(std::int64_t row, std::int64_t column) const;

 private:
  analysis::MaskCell cell(const analysis::MaskSpec& spec, std::int64_t row, std::int64_t column) const;

  MaskScene scene_;
  analysis::MaskSpec specB_;
  std::int64_t rows_ = 0;
  std::int64_t columns_ = 0;
  std::int64_t contextColumns_ = 0;
};

// Evenly spaced anchors over [0, T - B] for the training picture without a session.
std::vector<std::int64_t> evenlySpacedAnchors(std::int64_t sequenceLength, int blockSize, int count);

}  // namespace dfi::ui
