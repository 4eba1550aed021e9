#pragma once
// Invariants of the records, checked by the writer (a ValidationError: the caller's bug) and by
// the reader (a FormatError: the file is damaged). Each returns what is wrong, or nothing.

#include <cstdint>
#include <optional>
#include <string>

#include "dfi/session/records.h"

namespace dfi::session::detail {

// topK < 0 skips the top-k table size check (a reader that has not looked up the run).
std::optional<std::string> stepProblem(const StepRecord& step, std::int32_t topK);
std::optional<std::string> treeProblem(const TreeRecord& tree);

// How a tensor's row-major bytes are cut into tiles: fixed-size byte ranges (whole elements),
// the last one possibly shorter.
struct TileLayout {
  std::uint64_t totalBytes = 0;
  std::uint64_t tileBytes = 0;
  std::uint64_t tileCount = 0;
  std::uint64_t tileSize(std::uint64_t tile) const {
    return tile + 1 < tileCount ? tileBytes : totalBytes - tileBytes * tile;
  }
};

// The largest tensor and tile a reader accepts; bounds what a damaged header can make it allocate.
inline constexpr std::uint64_t kMaxTensorBytes = std::uint64_t{1} << 40;
inline constexpr std::uint64_t kMaxTileBytes = std::uint64_t{64} << 20;

// Fills `layout` from info's dtype, shape and tileBytes (or picks the tile size when
// chooseTileSize); returns what is wrong with them if anything.
std::optional<std::string> tileLayoutProblem(const TensorInfo& info, bool chooseTileSize, TileLayout& layout);

}  // namespace dfi::session::detail
