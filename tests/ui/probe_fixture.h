#pragma once
// Attention and hidden-state statistic records for the GUI tests of the attention and
// statistics views, appended to the session fixture (session_fixture.h) with the session
// library's Writer: a third run "drafter-gqa" (4 heads sharing 2 kv heads) whose first block
// holds the attention of two layers and every statistic (a NaN in drafter layer 1, parity
// statistics), and statistics for drafter-a's block at the same prompt and anchor, to overlay.

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dfi/session/hidden_statistics.h"
#include "dfi/session/reader.h"
#include "session_fixture.h"

namespace dfi::ui::test {

struct ProbeFixture {
  session::RunId gqaRun = 0;
  session::StepId gqaStep = 0;  // has attention and statistics
  session::StepId aStep = 0;    // drafter-a's block at the same prompt and anchor: statistics only
  session::StepId bareStep = 0;  // drafter-b's: nothing
  std::int64_t anchor = 0;
  int layers = 2, heads = 4, blockSize = 8;
};

// Head h of layer l looks at context position 2h + l from every slot, and at the block's own
// earlier slots; layer 1 head 3 mostly at the anchor slot.
inline float fixtureProbability(int layer, int head, int query, std::int64_t key, std::int64_t context) {
  const std::int64_t peak = layer == 1 && head == 3 ? context : 2 * head + layer;
  if (key >= context + query + 1) return 0.0f;  // later slots: masked
  return key == peak ? 0.6f : 0.4f / static_cast<float>(context + query);
}

inline std::vector<float> fixtureStatistic(const std::string& stat, int positions, float scale, float shift) {
  std::vector<float> v;
  for (int i = 0; i < positions; ++i) {
    const float x = static_cast<float>(i);
    if (stat == "mean") v.push_back(shift + 0.05f * std::sin(x));
    else if (stat == "std") v.push_back(scale * (1.0f + 0.1f * x));
    else if (stat == "rms") v.push_back(scale * (1.05f + 0.1f * x));
    else if (stat == "absmax") v.push_back(scale * (4.0f + 0.5f * x + (i == 3 ? 6.0f : 0.0f)));
    else v.push_back(0.0f);
  }
  return v;
}

inline void addStatistics(session::Writer& writer, session::RunId run, session::StepId step, std::int64_t anchor,
                          int blockSize, float scale, bool withNan) {
  namespace hs = session::hidden_statistics;
  struct Tensor {
    std::string_view name;
    int layer;
    int positions;
  };
  const int context = static_cast<int>(anchor);
  const Tensor tensors[] = {{hs::kTargetTap, 1, context},       {hs::kTargetTap, 3, context},
                            {hs::kDrafterFc, -1, context},      {hs::kDrafterHiddenNorm, -1, context},
                            {hs::kDrafterLayer, 0, blockSize}, {hs::kDrafterLayer, 1, blockSize}};
  for (const Tensor& t : tensors) {
    const float s = scale * (t.name == hs::kDrafterLayer ? 2.0f + static_cast<float>(t.layer) : 1.0f);
    for (const auto stat : hs::kPerPositionStats) {
      std::vector<float> values = fixtureStatistic(std::string(stat), t.positions, s, 0.01f * static_cast<float>(t.layer));
      if (withNan && t.name == hs::kDrafterLayer && t.layer == 1 && stat == "nan") values[5] = 3;
      writer.addStatistic({run, step, hs::statisticName(t.name, stat), t.layer, -1, values});
    }
    std::vector<float> histogram;
    for (int b = 0; b < hs::kHistogramBins; ++b)
      histogram.push_back(std::round(1000.0f * std::exp(-0.5f * std::pow((static_cast<float>(b) - 32.0f) / (6.0f * s), 2.0f))));
    writer.addStatistic({run, step, hs::statisticName(t.name, hs::kHistogram), t.layer, -1, histogram});
    writer.addStatistic({run, step, hs::statisticName(t.name, hs::kHistogramRange), t.layer, -1, {-8.0f * s, 8.0f * s}});
  }
}

inline ProbeFixture writeProbeFixtureFile(const std::string& path) {
  ProbeFixture f;
  session::Writer writer(path, {.mode = session::OpenMode::Overwrite});
  const fixture::FixtureShape shape{.prompts = 2, .stepsPerPrompt = 3, .blockSize = f.blockSize, .topK = 4};
  const std::vector<session::RunId> runs = fixture::writeFixture(writer, shape);
  f.anchor = static_cast<std::int64_t>(fixture::fixturePromptTokens(0).size());

  session::RunRecord run;
  run.name = "drafter-gqa";
  run.blockSize = f.blockSize;
  run.topK = shape.topK;
  run.device = "cpu";
  run.dtype = "float32";
  run.drafter.path = "/models/drafter-gqa";
  run.drafter.configJson = R"({"num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2})";
  run.target.path = "/models/target";
  f.gqaRun = writer.addRun(run);
  session::PromptRecord prompt;
  prompt.runId = f.gqaRun;
  prompt.promptId = 0;
  prompt.text = "Question 0";
  prompt.promptTokens = fixture::fixturePromptTokens(0);
  writer.addPrompt(prompt);
  session::StepRecord step = fixture::fixtureStep(0, 0, 0, f.anchor, f.blockSize - 1, shape.topK);
  step.runId = f.gqaRun;
  f.gqaStep = writer.addStep(step);

  const std::int64_t context = f.anchor;
  const std::int64_t keys = context + f.blockSize;
  for (int l = 0; l < f.layers; ++l) {
    std::vector<float> probs;
    for (int h = 0; h < f.heads; ++h)
      for (int q = 0; q < f.blockSize; ++q)
        for (std::int64_t k = 0; k < keys; ++k) probs.push_back(fixtureProbability(l, h, q, k, context));
    session::TensorRecord t;
    t.info.runId = f.gqaRun;
    t.info.stepId = f.gqaStep;
    t.info.name = "drafter.layers." + std::to_string(l) + ".attn.probs";
    t.info.layer = l;
    t.info.dtype = session::TensorDType::F32;
    t.info.shape = {f.heads, f.blockSize, keys};
    t.info.layout = "head,query,key";
    t.data.resize(probs.size() * sizeof(float));
    std::memcpy(t.data.data(), probs.data(), t.data.size());
    writer.addTensor(t);
  }
  addStatistics(writer, f.gqaRun, f.gqaStep, f.anchor, f.blockSize, 1.0f, true);
  writer.addStatistic({f.gqaRun, f.gqaStep, "parity.max_abs_diff", -1, -1, {2.5e-6f}});
  writer.addStatistic({f.gqaRun, f.gqaStep, "parity.argmax_agreement", -1, -1, {1.0f}});
  writer.addStatistic({f.gqaRun, f.gqaStep, "parity.first_differing_slot", -1, -1, {-1.0f}});

  // drafter-a's and drafter-b's first blocks of prompt 0 sit at the same anchor.
  session::Reader reader(path);
  f.aStep = reader.steps(runs[0], 0).front().stepId;
  f.bareStep = reader.steps(runs[1], 0).front().stepId;
  addStatistics(writer, runs[0], f.aStep, f.anchor, f.blockSize, 1.3f, false);
  writer.close();
  return f;
}

}  // namespace dfi::ui::test
