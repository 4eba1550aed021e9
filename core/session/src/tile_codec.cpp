#include "tile_codec.h"

#include <string>

#include <zstd.h>

namespace dfi::session::detail {

struct TileCompressor::Context {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ~Context() { ZSTD_freeCCtx(cctx); }
};

TileCompressor::TileCompressor(int level) : context_(std::make_unique<Context>()), level_(level) {}
TileCompressor::~TileCompressor() = default;

std::span<const std::uint8_t> TileCompressor::compress(std::span<const std::uint8_t> raw) {
  buffer_.resize(ZSTD_compressBound(raw.size()));
  const std::size_t n =
      ZSTD_compressCCtx(context_->cctx, buffer_.data(), buffer_.size(), raw.data(), raw.size(), level_);
  // With a buffer of compressBound bytes zstd cannot fail on valid input; only memory can.
  if (ZSTD_isError(n)) throw IoError(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
  return {buffer_.data(), n};
}

void decompressTile(std::span<const std::uint8_t> frame, std::size_t expectedBytes,
                    std::vector<std::uint8_t>& out, const ErrorContext& where) {
  const unsigned long long declared = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN)
    throw FormatError("tensor tile is not a zstd frame", where);
  if (declared != expectedBytes)
    throw FormatError("tensor tile holds " + std::to_string(declared) + " bytes, expected " +
                          std::to_string(expectedBytes),
                      where);
  const std::size_t start = out.size();
  out.resize(start + expectedBytes);
  const std::size_t n = ZSTD_decompress(out.data() + start, expectedBytes, frame.data(), frame.size());
  if (ZSTD_isError(n) || n != expectedBytes) {
    out.resize(start);
    throw FormatError(std::string("tensor tile is damaged: ") +
                          (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short frame"),
                      where);
  }
}

}  // namespace dfi::session::detail
