// runForwardPass (what `dflash-eval forward` runs) writes the logits, taps, statistics and
// final hidden state of one pass; read back, they equal transformers' reference.

#include <gtest/gtest.h>

#include <filesystem>

#include "dfi/base/error.h"
#include "dfi/engine/forward_pass.h"
#include "dfi/tensorfile/safetensors_file.h"
#include "reference_tensors.h"

namespace dfi::engine {
namespace {

TEST(ForwardPass, WritesLogitsTapsAndStatisticsMatchingTransformers) {
  const auto ref = tensorfile::SafetensorsFile::open(test::oracleDir() / "qwen35_untied" / "reference.safetensors");
  const at::Tensor ids = test::referenceTensor(ref, "input_ids").narrow(0, 0, 100);
  ForwardPassRequest request;
  request.modelDir = test::oracleDir() / "qwen35_untied";
  request.ids.assign(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
  request.taps = {2, 0, 2};
  request.statistics = true;
  request.out = std::filesystem::path(DFI_BINARY_DIR) / "tmp" / "forward_pass.safetensors";
  std::filesystem::create_directories(request.out.parent_path());
  const ForwardPassSummary summary = runForwardPass(request);
  EXPECT_EQ(summary.tokens, 100);
  EXPECT_EQ(summary.layers, 4);

  const auto out = tensorfile::SafetensorsFile::open(request.out);
  // A causal model's first 100 positions do not depend on the later tokens.
  auto expected = [&](const std::string& name) { return test::referenceTensor(ref, name).narrow(0, 0, 100); };
  EXPECT_TRUE(test::referenceTensor(out, "input_ids").equal(ids));
  EXPECT_LE(test::maxAbsDiff(test::referenceTensor(out, "logits"), expected("logits")), 1e-4);
  EXPECT_LE(test::maxAbsDiff(test::referenceTensor(out, "final_hidden"), expected("hidden_states.4")), 1e-4);
  for (const int layer : {0, 2}) {
    const std::string id = std::to_string(layer);
    EXPECT_LE(test::maxAbsDiff(test::referenceTensor(out, "hidden." + id),
                               expected("hidden_states." + std::to_string(layer + 1))), 1e-4);
    EXPECT_LE(test::maxAbsDiff(test::referenceTensor(out, "stats." + id), expected("stats." + id)), 1e-4);
  }
  EXPECT_EQ(out.tensors().size(), 7u);  // input_ids, logits, final_hidden, 2 taps, 2 stats
  EXPECT_EQ(out.metadata().at("dtype"), "fp32");
}

TEST(ForwardPass, OutOfVocabularyIdIsAUsageError) {
  ForwardPassRequest request;
  request.modelDir = test::oracleDir() / "qwen3_tied_gqa";
  request.ids = {1, 2, 1000};
  request.out = std::filesystem::path(DFI_BINARY_DIR) / "tmp" / "forward_pass_bad.safetensors";
  EXPECT_THROW(runForwardPass(request), UsageError);
}

}  // namespace
}  // namespace dfi::engine
