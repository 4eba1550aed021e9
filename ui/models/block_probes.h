#pragma once
// What the attention and statistics views show of one block, read from the session: the
// drafter's attention probabilities of every layer (tensors "drafter.layers.<l>.attn.probs",
// F32 [heads, B, context + B]) and the hidden-state statistics of the step
// (dfi/session/hidden_statistics.h), grouped per tensor. Also the token ids an inspect request
// needs to re-draft the block (the prompt and the response up to the anchor).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <QString>

#include "dfi/protocol/messages.h"
#include "dfi/session/records.h"

namespace dfi::ui {

class SessionContext;

// One layer's attention probabilities, [heads, queries, keys] row-major.
struct AttentionLayer {
  int layer = 0;
  std::int64_t heads = 0;
  std::int64_t queries = 0;  // block slots B
  std::int64_t keys = 0;     // context + B
  std::vector<float> probs;
  float at(std::int64_t head, std::int64_t query, std::int64_t key) const {
    return probs[static_cast<std::size_t>((head * queries + query) * keys + key)];
  }
};

// Mean or max over the heads of one layer, [queries, keys].
std::vector<float> reduceHeads(const AttentionLayer& layer, bool max);

// The per-position statistics of one tensor ("target.tap" layer 3, "drafter.fc", ...).
struct StatisticSeries {
  std::string tensor;  // hidden_statistics.h names
  int layer = -1;
  std::map<std::string, std::vector<float>> stats;  // "mean", "std", ..., "histogram", "histogram_range"
  QString label() const;
  std::size_t positions() const;
  const std::vector<float>* stat(const std::string& name) const;
};

struct BlockProbes {
  std::vector<AttentionLayer> attention;     // by layer
  std::vector<StatisticSeries> statistics;   // taps by layer, fc, hidden_norm, drafter layers
  std::vector<session::StatisticRecord> other;  // statistics of other names (parity.*)
  bool empty() const { return attention.empty() && statistics.empty(); }
};

// Groups hidden-state statistic records by tensor and layer, in reading order.
BlockProbes groupStatistics(const std::vector<session::StatisticRecord>& records);
// Everything the session holds for the step; reading errors are reported by the context.
BlockProbes loadBlockProbes(SessionContext& context, session::RunId run, session::StepId step);

// A teacher-forced step records only the context rows it adds over the previous anchor of its
// pass, [previous anchor, anchor) (dfi/session/hidden_statistics.h); the rows before are at the
// pass's earlier steps. Prepends them to the step's context series (target taps, fc,
// hidden_norm) as far back as they join up, so that the curves cover the block's whole context;
// the histogram stays the step's own rows. Returns how many rows were prepended (0 for a live
// step, or when the earlier steps hold no statistics).
std::int64_t prependEarlierContextRows(SessionContext& context, const session::StepRecord& step, BlockProbes& probes);

// Heads per kv head from the drafter's config.json (num_attention_heads / num_key_value_heads);
// 1 when the config does not say.
int headsPerKvHead(const std::string& configJson);

// The sequence an inspect request re-drafts at `anchor`: the prompt, then the response the
// run's steps commit, through the anchor. nullopt when the records do not reach it.
std::optional<std::vector<std::int64_t>> sequenceThroughAnchor(const std::vector<session::TokenId>& prompt,
                                                               const std::vector<session::StepRecord>& steps,
                                                               std::int64_t anchor);

// The "inspect" request for one recorded block (its request id left to InspectClient).
std::optional<protocol::InspectRequest> inspectRequestFor(SessionContext& context, session::StepId step, QString* why);

}  // namespace dfi::ui
