// GLM-5 targets against transformers (tests/oracle/gen_glm5_models.py): the oracle suite (fp32
// logits and hidden states, bf16 argmax, cached decode against transformers' own and a full
// recompute, verification rollback of the latent and indexer caches) and the routing suite over
// latent attention restricted by DeepSeek sparse attention's indexer ("full" and "shared" layers,
// index_topk below the sequence length); how the configs read; what a config that disagrees
// with the weights reports. The live loop is test_dflash_live_glm5.

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "dfi/modelspec/config_error.h"
#include "moe_routing_suite.h"
#include "target_oracle_suite.h"

namespace dfi::engine::test {
namespace {

INSTANTIATE_TEST_SUITE_P(Glm5, TargetOracle, ::testing::Values("glm5/glm5_sparse", "glm5/glm5_pattern"));
INSTANTIATE_TEST_SUITE_P(Glm5, MoeRouting, ::testing::Values("glm5/glm5_sparse", "glm5/glm5_pattern"));

std::filesystem::path modelDir(const std::string& name) { return oracleRoot() / "glm5" / name; }

TEST(Glm5Config, ReadsAsTransformersDefinesIt) {
  const modelspec::TargetConfig sparse = modelspec::parseTargetConfig(modelDir("glm5_sparse") / "config.json");
  EXPECT_EQ(sparse.family, modelspec::TargetFamily::GlmMoeDsa);
  ASSERT_TRUE(sparse.latentAttention && sparse.sparseIndexer);
  EXPECT_EQ(sparse.latentAttention->qLoraRank, 24);
  EXPECT_TRUE(sparse.latentAttention->ropeInterleave);
  EXPECT_EQ(*sparse.sparseIndexer, (modelspec::SparseAttentionIndexer{
                                       .numHeads = 16, .headDim = 16, .topk = 256,
                                       .ownIndexer = {true, true, false, true}}));  // freq 2, offset 2
  ASSERT_TRUE(sparse.moe);
  EXPECT_EQ(sparse.moe->mlpOnlyLayers, (std::vector<int>{0, 2}));  // mlp_layer_types

  const modelspec::TargetConfig pattern = modelspec::parseTargetConfig(modelDir("glm5_pattern") / "config.json");
  EXPECT_EQ(pattern.sparseIndexer->ownIndexer, (std::vector<bool>{true, false, false, true}));  // "FSSF"
  EXPECT_EQ(pattern.moe->mlpOnlyLayers, (std::vector<int>{0, 1}));
}

// A shared layer reads the choice of the full layer before it; a forward that starts on one
// (which no valid config makes) is refused rather than attending to every key.
TEST(Glm5Errors, ConfigsThatCannotChooseKeysAreRefused) {
  namespace fs = std::filesystem;
  std::ifstream in(modelDir("glm5_sparse") / "config.json");
  nlohmann::json config = nlohmann::json::parse(in);
  config["indexer_types"] = {"shared", "full", "shared", "full"};
  try {
    modelspec::parseTargetConfigText(config.dump(), "glm5/config.json");
    ADD_FAILURE() << "parsed";
  } catch (const modelspec::ConfigValidationError& e) {
    EXPECT_EQ(e.problems().at(0).field, "indexer_types[0]");
  }
  config["indexer_types"] = {"full", "full", "sparse", "full"};
  EXPECT_THROW(modelspec::parseTargetConfigText(config.dump(), "glm5/config.json"), modelspec::ConfigValidationError);
}

// A config whose indexer shapes disagree with the weights: a ValidationError naming the
// checkpoint file, the tensor and both shapes.
TEST(Glm5Errors, IndexerShapesThatDisagreeWithTheWeightsNameTensorAndShapes) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(DFI_BINARY_DIR) / "tmp" / "glm5_errors_index_n_heads";
  fs::create_directories(dir);
  std::ifstream in(modelDir("glm5_sparse") / "config.json");
  nlohmann::json config = nlohmann::json::parse(in);
  config["index_n_heads"] = 8;
  std::ofstream(dir / "config.json") << config.dump(2);
  fs::copy_file(modelDir("glm5_sparse") / "model.safetensors", dir / "model.safetensors",
                fs::copy_options::overwrite_existing);
  try {
    TargetModel::load(dir, ModelOptions{});
    ADD_FAILURE() << "loaded";
  } catch (const ValidationError& e) {
    const std::string message = e.what();
    for (const std::string& part : {(dir / "model.safetensors").string(),
                                    std::string("model.layers.0.self_attn.indexer.wq_b.weight"),
                                    std::string("[256, 24]"), std::string("[128, 24]")})
      EXPECT_NE(message.find(part), std::string::npos) << part << " not in: " << message;
  }
}

}  // namespace
}  // namespace dfi::engine::test
