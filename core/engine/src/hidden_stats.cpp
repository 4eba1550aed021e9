#include "hidden_stats.h"

#include <ATen/ATen.h>

namespace dfi::engine {

at::Tensor hiddenStatistics(const at::Tensor& h) {
  const at::Tensor x = h.to(at::kFloat);
  const at::Tensor mean = x.mean(-1);
  const at::Tensor std = (x - mean.unsqueeze(-1)).pow(2).mean(-1).sqrt();
  const at::Tensor rms = x.pow(2).mean(-1).sqrt();
  const at::Tensor absMax = std::get<0>(x.abs().max(-1));
  return at::stack({mean, std, rms, absMax}, -1);
}

}  // namespace dfi::engine
