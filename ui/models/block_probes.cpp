#include "models/block_probes.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <QObject>
#include <nlohmann/json.hpp>

#include "session/session_context.h"
#include "dfi/session/hidden_statistics.h"
#include "dfi/analysis/response_sequence.h"
#include "dfi/settings/settings.h"
#include "dfi/settings/settings_fields.h"

namespace dfi::ui {
namespace {

namespace hs = session::hidden_statistics;

constexpr std::string_view kAttentionPrefix = "drafter.layers.";
constexpr std::string_view kAttentionSuffix = ".attn.probs";

int tensorOrder(const std::string& tensor) {
  if (tensor == hs::kTargetTap) return 0;
  if (tensor == hs::kDrafterFc) return 1;
  if (tensor == hs::kDrafterHiddenNorm) return 2;
  if (tensor == hs::kDrafterLayer) return 3;
  return 4;
}

bool isHiddenTensor(const std::string& tensor) { return tensorOrder(tensor) < 4; }

std::string dtypeOption(const std::string& dtype) {
  if (dtype == "bfloat16" || dtype == "bf16") return "bf16";
  if (dtype == "float16" || dtype == "fp16") return "fp16";
  return "fp32";
}

}  // namespace

std::vector<float> reduceHeads(const AttentionLayer& layer, bool max) {
  const auto cells = static_cast<std::size_t>(layer.queries * layer.keys);
  std::vector<float> out(cells, max ? 0.0f : 0.0f);
  if (layer.heads == 0) return out;
  for (std::int64_t h = 0; h < layer.heads; ++h) {
    const float* p = layer.probs.data() + static_cast<std::size_t>(h) * cells;
    for (std::size_t i = 0; i < cells; ++i) out[i] = max ? std::max(out[i], p[i]) : out[i] + p[i];
  }
  if (!max)
    for (float& v : out) v /= static_cast<float>(layer.heads);
  return out;
}

QString StatisticSeries::label() const {
  const QString name = QString::fromStdString(tensor);
  if (tensor == hs::kTargetTap) return QStringLiteral("target tap (layer %1)").arg(layer);
  if (tensor == hs::kDrafterLayer) return QStringLiteral("drafter layer %1").arg(layer);
  if (tensor == hs::kDrafterFc) return QStringLiteral("drafter fc");
  if (tensor == hs::kDrafterHiddenNorm) return QStringLiteral("drafter hidden_norm");
  return layer >= 0 ? QStringLiteral("%1 (layer %2)").arg(name).arg(layer) : name;
}

const std::vector<float>* StatisticSeries::stat(const std::string& name) const {
  const auto it = stats.find(name);
  return it == stats.end() ? nullptr : &it->second;
}

std::size_t StatisticSeries::positions() const {
  std::size_t n = 0;
  for (const auto name : hs::kPerPositionStats)
    if (const auto* v = stat(std::string(name))) n = std::max(n, v->size());
  return n;
}

BlockProbes groupStatistics(const std::vector<session::StatisticRecord>& records) {
  BlockProbes probes;
  std::map<std::tuple<int, int, std::string>, StatisticSeries> series;
  for (const session::StatisticRecord& r : records) {
    const auto dot = r.name.rfind('.');
    const std::string tensor = dot == std::string::npos ? r.name : r.name.substr(0, dot);
    if (dot == std::string::npos || !isHiddenTensor(tensor)) {
      probes.other.push_back(r);
      continue;
    }
    StatisticSeries& s = series[{tensorOrder(tensor), r.layer, tensor}];
    s.tensor = tensor;
    s.layer = r.layer;
    s.stats[r.name.substr(dot + 1)] = r.values;
  }
  for (auto& [key, s] : series) probes.statistics.push_back(std::move(s));
  return probes;
}

BlockProbes loadBlockProbes(SessionContext& context, session::RunId run, session::StepId step) {
  BlockProbes probes = groupStatistics(context.statistics(run, step));
  for (const session::TensorInfo& info : context.tensors(run, step)) {
    const std::string& n = info.name;
    if (!n.starts_with(kAttentionPrefix) || !n.ends_with(kAttentionSuffix)) continue;
    if (info.dtype != session::TensorDType::F32 || info.shape.size() != 3) continue;
    const std::optional<session::TensorRecord> tensor = context.readTensor(info.tensorId);
    if (!tensor) continue;
    AttentionLayer layer;
    layer.layer = info.layer >= 0 ? info.layer
                                  : std::stoi(n.substr(kAttentionPrefix.size(),
                                                       n.size() - kAttentionPrefix.size() - kAttentionSuffix.size()));
    layer.heads = info.shape[0];
    layer.queries = info.shape[1];
    layer.keys = info.shape[2];
    const auto count = static_cast<std::size_t>(layer.heads * layer.queries * layer.keys);
    if (tensor->data.size() != count * sizeof(float)) continue;
    layer.probs.resize(count);
    std::memcpy(layer.probs.data(), tensor->data.data(), tensor->data.size());
    // The same layer fetched twice (an inspect repeated) keeps the newest.
    std::erase_if(probes.attention, [&](const AttentionLayer& l) { return l.layer == layer.layer; });
    probes.attention.push_back(std::move(layer));
  }
  std::ranges::sort(probes.attention, {}, &AttentionLayer::layer);
  return probes;
}

std::int64_t prependEarlierContextRows(SessionContext& context, const session::StepRecord& step, BlockProbes& probes) {
  if (step.mode != session::EvaluationMode::TeacherForced) return 0;
  std::vector<StatisticSeries*> context_series;
  for (StatisticSeries& s : probes.statistics)
    if (s.tensor != hs::kDrafterLayer) context_series.push_back(&s);
  if (context_series.empty()) return 0;
  std::vector<session::StepRecord> earlier;
  for (session::StepRecord& s : context.steps(step.runId, step.promptId))
    if (s.mode == session::EvaluationMode::TeacherForced && s.anchorPosition < step.anchorPosition)
      earlier.push_back(std::move(s));
  std::ranges::sort(earlier, std::ranges::greater{}, &session::StepRecord::anchorPosition);
  // Walk back while each earlier step's rows end where the ones already shown begin.
  const auto rows = static_cast<std::int64_t>(context_series.front()->positions());
  std::int64_t begin = step.anchorPosition - rows, prepended = 0;
  for (const session::StepRecord& e : earlier) {
    if (begin <= 0) break;
    if (e.anchorPosition > begin) continue;
    if (e.anchorPosition < begin) break;  // a gap: the rows in between are not recorded
    const BlockProbes theirs = groupStatistics(context.statistics(e.runId, e.stepId));
    std::vector<const StatisticSeries*> matches;
    for (const StatisticSeries* mine : context_series) {
      const auto it = std::ranges::find_if(theirs.statistics, [&](const StatisticSeries& t) {
        return t.tensor == mine->tensor && t.layer == mine->layer;
      });
      if (it == theirs.statistics.end()) break;
      matches.push_back(&*it);
    }
    const auto n = matches.size() == context_series.size() ? static_cast<std::int64_t>(matches.front()->positions()) : 0;
    if (n == 0 || std::ranges::any_of(matches, [n](const StatisticSeries* t) {
          return static_cast<std::int64_t>(t->positions()) != n;
        }))
      break;
    for (std::size_t i = 0; i < context_series.size(); ++i)
      for (const auto stat : hs::kPerPositionStats) {
        const std::string name(stat);
        const std::vector<float>* from = matches[i]->stat(name);
        std::vector<float>& to = context_series[i]->stats[name];
        // A statistic the earlier step lacks: no NaN/Inf counted, values not recorded (gaps).
        const bool count = stat == "nan" || stat == "inf";
        if (from) to.insert(to.begin(), from->begin(), from->end());
        else to.insert(to.begin(), static_cast<std::size_t>(n), count ? 0.0f : std::numeric_limits<float>::quiet_NaN());
      }
    begin -= n;
    prepended += n;
  }
  return prepended;
}

int headsPerKvHead(const std::string& configJson) {
  const nlohmann::json config = nlohmann::json::parse(configJson, nullptr, false);
  if (!config.is_object()) return 1;
  const int heads = config.value("num_attention_heads", 0);
  const int kv = config.value("num_key_value_heads", heads);
  return heads > 0 && kv > 0 && heads % kv == 0 ? heads / kv : 1;
}

std::optional<std::vector<std::int64_t>> sequenceThroughAnchor(const std::vector<session::TokenId>& prompt,
                                                               const std::vector<session::StepRecord>& steps,
                                                               std::int64_t anchor) {
  // Live steps rebuild the response; teacher-forced ones re-draft at its positions.
  std::vector<session::StepRecord> live;
  for (const session::StepRecord& s : steps)
    if (s.mode == session::EvaluationMode::Live) live.push_back(s);
  const analysis::ResponseSequence sequence = analysis::ResponseSequence::build(prompt, live.empty() ? steps : live);
  std::vector<std::int64_t> ids;
  for (const analysis::SequenceToken& t : sequence.tokens) ids.push_back(t.id);
  // A step's own anchor token may be the one position the rebuild lacks.
  for (const session::StepRecord& s : steps)
    if (s.anchorPosition == static_cast<std::int64_t>(ids.size())) ids.push_back(s.anchorToken);
  if (anchor < 0 || static_cast<std::int64_t>(ids.size()) <= anchor) return std::nullopt;
  ids.resize(static_cast<std::size_t>(anchor + 1));
  return ids;
}

std::optional<protocol::InspectRequest> inspectRequestFor(SessionContext& context, session::StepId stepId,
                                                         QString* why) {
  auto fail = [&](const QString& text) -> std::optional<protocol::InspectRequest> {
    if (why) *why = text;
    return std::nullopt;
  };
  const std::optional<session::StepRecord> step = context.step(stepId);
  if (!step) return fail(QObject::tr("no such step"));
  const std::optional<session::RunRecord> run = context.run(step->runId);
  if (!run) return fail(QObject::tr("the step's run is missing"));
  if (run->target.path.empty() || run->drafter.path.empty())
    return fail(QObject::tr("the run does not name its target and drafter directories"));
  const std::optional<session::PromptRecord> prompt = context.prompt(step->runId, step->promptId);
  if (!prompt) return fail(QObject::tr("the step's prompt is missing"));
  const auto ids = sequenceThroughAnchor(prompt->promptTokens, context.steps(step->runId, step->promptId),
                                         step->anchorPosition);
  if (!ids) return fail(QObject::tr("the recorded steps do not reach the anchor at position %1").arg(step->anchorPosition));
  protocol::InspectRequest request;
  request.target = run->target.path;
  request.drafter = run->drafter.path;
  request.ids = *ids;
  request.anchor = step->anchorPosition;
  request.variant = run->maskVariant;
  request.topK = std::max(run->topK, 1);
  request.attention = true;
  request.statistics = true;
  // The devices and dtype the run itself recorded in its settings; a run that records none (an
  // imported one) takes the engine's default devices and the dtype its record names.
  try {
    const nlohmann::json recorded = nlohmann::json::parse(run->settingsJson.empty() ? "{}" : run->settingsJson);
    request.model = settings::recordedRunSettings(run->settingsJson).model;
    if (!recorded.contains(std::string(fieldName(&settings::ModelOptions::dtype))))
      request.model.dtype = dtypeOption(run->dtype);
  } catch (const std::exception& e) {
    return fail(QObject::tr("the run's recorded settings do not read: %1").arg(QString::fromStdString(e.what())));
  }
  if (run->blockSize > 0) request.blockSize = run->blockSize;
  request.runId = step->runId;
  request.stepId = step->stepId;
  return request;
}

}  // namespace dfi::ui
