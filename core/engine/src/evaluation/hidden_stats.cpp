#include "evaluation/hidden_stats.h"

#include <string>

#include <ATen/ATen.h>

#include "dfi/session/hidden_statistics.h"

namespace dfi::engine {

at::Tensor hiddenStatistics(const at::Tensor& h) {
  const at::Tensor x = h.to(at::kFloat);
  const at::Tensor mean = x.mean(-1);
  const at::Tensor std = (x - mean.unsqueeze(-1)).pow(2).mean(-1).sqrt();
  const at::Tensor rms = x.pow(2).mean(-1).sqrt();
  const at::Tensor absMax = std::get<0>(x.abs().max(-1));
  return at::stack({mean, std, rms, absMax}, -1);
}

namespace {

std::vector<float> floats(const at::Tensor& t) {
  const at::Tensor host = t.to(at::kCPU, at::kFloat).contiguous();
  return {host.data_ptr<float>(), host.data_ptr<float>() + host.numel()};
}

}  // namespace

std::vector<session::StatisticRecord> hiddenStatisticRecords(const at::Tensor& rows, std::string_view tensor,
                                                             int layer) {
  namespace hs = session::hidden_statistics;
  const at::Tensor x = rows.to(at::kFloat).reshape({-1, rows.size(-1)});
  const at::Tensor perRow = hiddenStatistics(x);  // [N, 4]
  std::vector<session::StatisticRecord> records;
  auto add = [&](std::string_view stat, std::vector<float> values) {
    session::StatisticRecord r;
    r.name = hs::statisticName(tensor, stat);
    r.layer = layer;
    r.values = std::move(values);
    records.push_back(std::move(r));
  };
  for (int i = 0; i < kNumHiddenStats; ++i) add(hs::kPerPositionStats[static_cast<std::size_t>(i)], floats(perRow.select(1, i)));
  add("nan", floats(x.isnan().sum(-1)));
  add("inf", floats(x.isinf().sum(-1)));
  const at::Tensor finite = x.masked_select(x.isfinite());
  float lo = 0, hi = 0;
  if (finite.numel() > 0) {
    lo = finite.min().item<float>();
    hi = finite.max().item<float>();
  }
  // histc needs a non-empty range; a constant tensor puts everything in one bin.
  add(hs::kHistogram, floats(finite.numel() > 0 ? at::histc(finite, hs::kHistogramBins, lo, hi > lo ? hi : lo + 1)
                                                : at::zeros({hs::kHistogramBins})));
  add(hs::kHistogramRange, {lo, hi});
  return records;
}

}  // namespace dfi::engine
