#pragma once
// Tensor tiles are stored zstd-compressed (one zstd frame per tile, with its content size in
// the frame header). A tile is a band of whole leading-dimension rows of a row-major tensor.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "dfi/base/error.h"

namespace dfi::session::detail {

// Raw bytes a tile aims for: large enough for zstd to find structure, small enough to stay in
// SQLite's efficient BLOB range and to fetch only the rows a view shows.
inline constexpr std::size_t kTileTargetBytes = 128 * 1024;

class TileCompressor {
 public:
  explicit TileCompressor(int level = 1);  // level 1: the writer must keep up with the engine
  ~TileCompressor();
  TileCompressor(const TileCompressor&) = delete;
  TileCompressor& operator=(const TileCompressor&) = delete;

  // Returns a view of the compressed frame, valid until the next call.
  std::span<const std::uint8_t> compress(std::span<const std::uint8_t> raw);

 private:
  struct Context;
  std::unique_ptr<Context> context_;
  int level_;
  std::vector<std::uint8_t> buffer_;
};

// Appends the decompressed tile to `out`; the frame must hold exactly `expectedBytes`.
void decompressTile(std::span<const std::uint8_t> frame, std::size_t expectedBytes,
                    std::vector<std::uint8_t>& out, const ErrorContext& where);

}  // namespace dfi::session::detail
