#include "evaluation/teacher_forced/hidden_stats.h"

#include <ATen/ATen.h>

#include "dfi/analysis/hidden_statistics.h"
#include "dfi/session/hidden_statistics.h"

namespace dfi::engine {

std::vector<session::StatisticRecord> hiddenStatisticRecords(const at::Tensor& rows, std::string_view tensor,
                                                             int layer) {
  // fp64 holds every fp32/bf16/fp16 value exactly: the statistics see the tensor's own values.
  const at::Tensor host = rows.to(at::kCPU, at::kDouble).contiguous();
  return analysis::hiddenStatisticRecords({host.data_ptr<double>(), static_cast<std::size_t>(host.numel())},
                                          rows.size(-1), tensor, layer);
}

std::vector<session::StatisticRecord> routingRecords(const ExpertRouting& routing, std::int64_t from,
                                                     std::int64_t count, int layer) {
  auto record = [&](std::string_view name, const at::Tensor& rows) {
    const at::Tensor host = rows.narrow(0, from, count).to(at::kCPU, at::kFloat).contiguous();
    session::StatisticRecord r;
    r.name = std::string(name);
    r.layer = layer;
    r.values.assign(host.data_ptr<float>(), host.data_ptr<float>() + host.numel());
    return r;
  };
  namespace hs = session::hidden_statistics;
  return {record(hs::kTargetRouterExperts, routing.experts), record(hs::kTargetRouterWeights, routing.weights)};
}

at::Tensor hiddenStatistics(const at::Tensor& h) {
  const std::vector<session::StatisticRecord> records = hiddenStatisticRecords(h, "hidden");
  // The records start with the per-position statistics in HiddenStat order.
  std::vector<at::Tensor> channels;
  for (int i = 0; i < kNumHiddenStats; ++i) channels.push_back(at::tensor(records[static_cast<std::size_t>(i)].values));
  std::vector<std::int64_t> shape(h.sizes().begin(), h.sizes().end() - 1);
  shape.push_back(kNumHiddenStats);
  return at::stack(channels, -1).view(shape);
}

}  // namespace dfi::engine
