#include "models/grouped_conv.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/addcmul.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/zeros_like.h>

#include "kernels/projection.h"

namespace dfi::engine {

std::pair<at::Tensor, at::Tensor> GroupedDynamicConv::prepare(const at::Tensor& hidden) const {
  const std::int64_t h = hidden.size(-1), groups = h / groupSize_, k = w_.baseKernel.size(1);
  const at::Tensor dynamic =
      project(hidden.reshape({-1, h}), w_.kernelProjection).view({hidden.size(0), hidden.size(1), 2, k, groups});
  return {convolve(hidden, dynamic.select(2, 0), w_.baseKernel[0]), dynamic.select(2, 1)};
}

at::Tensor GroupedDynamicConv::finish(const at::Tensor& hidden, const at::Tensor& dynamic) const {
  return convolve(hidden, dynamic, w_.baseKernel[1]);
}

// Op for op the package's _grouped_dynamic_convolve, so the rounding is the package's; a shift
// past the block's length contributes zeros (the package's F.pad would mis-shape there).
at::Tensor GroupedDynamicConv::convolve(const at::Tensor& hidden, const at::Tensor& dynamic,
                                        const at::Tensor& base) const {
  const std::int64_t n = hidden.size(0), length = hidden.size(1), h = hidden.size(2);
  const std::int64_t groups = h / groupSize_, k = base.size(0);
  const at::Tensor blocks = hidden.view({n, length, groups, groupSize_});
  const at::Tensor dyn = dynamic.reshape({n, length, k, groups, 1});
  at::Tensor output = at::zeros_like(blocks);
  for (std::int64_t offset = 0; offset < std::min(k, length); ++offset) {
    const at::Tensor values =
        offset == 0 ? blocks : at::constant_pad_nd(blocks.narrow(1, 0, length - offset), {0, 0, 0, 0, offset, 0});
    const at::Tensor kernel = base[offset].view({1, 1, groups, groupSize_}).to(hidden.scalar_type());
    output = output + kernel * values;
    output = at::addcmul(output, dyn.select(2, offset), values);
  }
  return output.view_as(hidden);
}

}  // namespace dfi::engine
