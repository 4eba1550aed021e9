#include "io/mxfp4.h"

#include <array>
#include <cmath>

#include <ATen/ATen.h>

#include "dfi/base/error.h"
#include "io/fp4_e2m1.h"
#include "io/weight_loader.h"

namespace dfi::engine {
namespace {

constexpr int kScaleBias = 127;  // E8M0: the byte is the binary exponent plus 127
constexpr int64_t kBlockBytes = 16;  // 32 values per scale

}  // namespace

at::Tensor dequantizeMxfp4(const at::Tensor& blocks, const at::Tensor& scales, at::ScalarType dtype) {
  TORCH_CHECK(blocks.scalar_type() == at::kByte && scales.scalar_type() == at::kByte, "MXFP4 blocks and scales are uint8");
  TORCH_CHECK(blocks.dim() >= 3 && blocks.size(-1) == kBlockBytes, "MXFP4 blocks are [..., R, G, 16]");
  TORCH_CHECK(blocks.sizes().slice(0, blocks.dim() - 1) == scales.sizes(), "MXFP4 scales are blocks' shape without the last dim");
  const at::Tensor b = blocks.cpu().contiguous(), s = scales.cpu().contiguous();
  const int64_t groups = s.numel();
  // fp32 first, then the output dtype (exact for these values: a 2-bit significand). Each
  // value is ldexp(e2m1, exponent) as torch.ldexp computes it, not e2m1 * 2^exponent: at the
  // top scale byte 2^128 overflows fp32, while 0.5 * 2^128 does not (and 0 stays 0).
  at::Tensor values = at::empty({groups, 2 * kBlockBytes}, at::kFloat);
  const uint8_t* bp = b.data_ptr<uint8_t>();
  const uint8_t* sp = s.data_ptr<uint8_t>();
  float* out = values.data_ptr<float>();
  for (int64_t g = 0; g < groups; ++g) {
    const int exponent = static_cast<int>(sp[g]) - kScaleBias;
    for (int64_t i = 0; i < kBlockBytes; ++i) {
      const uint8_t byte = bp[g * kBlockBytes + i];
      out[g * 2 * kBlockBytes + 2 * i] = std::ldexp(kE2m1Values[byte & 0x0F], exponent);
      out[g * 2 * kBlockBytes + 2 * i + 1] = std::ldexp(kE2m1Values[byte >> 4], exponent);
    }
  }
  std::vector<int64_t> shape(blocks.sizes().begin(), blocks.sizes().end() - 2);
  shape.push_back(blocks.size(-2) * 2 * kBlockBytes);
  return values.to(dtype).view(shape).transpose(-2, -1);
}

at::Tensor loadMxfp4(const WeightLoader& weights, const std::string& name, int64_t numExperts, int64_t in,
                     int64_t out, at::Device device) {
  if (in % (2 * kBlockBytes) != 0)
    throw ValidationError("MXFP4 packs the input dimension in blocks of 32, but it is " + std::to_string(in),
                          {.file = weights.checkpointPath(), .item = name + "_blocks"});
  const int64_t groups = in / (2 * kBlockBytes);
  const at::Tensor blocks = weights.loadStored(name + "_blocks", {numExperts, out, groups, kBlockBytes});
  const at::Tensor scales = weights.loadStored(name + "_scales", {numExperts, out, groups});
  for (const auto& [tensor, suffix] : {std::pair{blocks, "_blocks"}, std::pair{scales, "_scales"}})
    if (tensor.scalar_type() != at::kByte)
      throw FormatError("MXFP4 " + std::string(suffix + 1) + " must be stored as U8, found " +
                            std::string(c10::toString(tensor.scalar_type())),
                        {.file = weights.checkpointPath(), .item = name + suffix});
  return dequantizeMxfp4(blocks, scales, weights.dtype()).to(device);
}

}  // namespace dfi::engine
