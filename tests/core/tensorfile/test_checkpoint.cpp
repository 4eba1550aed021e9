// Checkpoint resolution (directory, single file, index), name mapping, zero-copy views and
// every index rule, on small files written by SafetensorsWriter.

#include <gtest/gtest.h>

#include <numeric>

#include "dfi/base/error.h"
#include "dfi/tensorfile/checkpoint.h"
#include "dfi/tensorfile/safetensors_writer.h"
#include "dfi/tensorfile/sha256.h"
#include "tensorfile_test_support.h"

namespace dfi::tensorfile {
namespace {

using testing::catchError;
using testing::ScratchDir;
using testing::writeFile;

// Writes one U8 tensor per name, each holding its own name's bytes (so views can be checked).
void writeShard(const std::filesystem::path& file, const std::vector<std::string>& names) {
  SafetensorsWriter writer(file);
  for (const auto& name : names)
    writer.add(name, DType::U8, {std::int64_t(name.size())}, std::as_bytes(std::span(name.data(), name.size())));
  writer.finish();
}

std::string viewText(const TensorView& view) {
  return {reinterpret_cast<const char*>(view.data()), view.bytes().size()};
}

std::string indexJson(const std::vector<std::pair<std::string, std::string>>& weightMap) {
  std::string json = R"({"metadata": {"total_size": 0}, "weight_map": {)";
  for (std::size_t i = 0; i < weightMap.size(); ++i)
    json += (i ? ", " : "") + ("\"" + weightMap[i].first + "\": \"" + weightMap[i].second + "\"");
  return json + "}}";
}

class CheckpointTest : public ::testing::Test {
 protected:
  // A Qwen3.5-style sharded checkpoint: text weights under model.language_model., a vision
  // tower and an MTP head that the text mapping skips.
  void writeSharded() {
    writeShard(dir / "model-00001-of-00002.safetensors",
               {"model.language_model.embed_tokens.weight", "model.visual.patch_embed.weight", "lm_head.weight"});
    writeShard(dir / "model-00002-of-00002.safetensors", {"model.language_model.norm.weight", "mtp.fc.weight"});
    writeFile(dir / "model.safetensors.index.json",
              indexJson({{"model.language_model.embed_tokens.weight", "model-00001-of-00002.safetensors"},
                         {"model.visual.patch_embed.weight", "model-00001-of-00002.safetensors"},
                         {"lm_head.weight", "model-00001-of-00002.safetensors"},
                         {"model.language_model.norm.weight", "model-00002-of-00002.safetensors"},
                         {"mtp.fc.weight", "model-00002-of-00002.safetensors"}}));
  }

  ScratchDir dir;
};

TEST_F(CheckpointTest, ShardedQwenTextMapping) {
  writeSharded();
  const auto checkpoint = Checkpoint::open(dir.path());
  EXPECT_EQ(checkpoint.names(),
            (std::vector<std::string>{"lm_head.weight", "model.embed_tokens.weight", "model.norm.weight"}));
  EXPECT_FALSE(checkpoint.contains("model.visual.patch_embed.weight"));
  EXPECT_FALSE(checkpoint.contains("mtp.fc.weight"));
  const auto& norm = checkpoint.info("model.norm.weight");
  EXPECT_EQ(norm.storedName, "model.language_model.norm.weight");
  EXPECT_EQ(norm.file.filename(), "model-00002-of-00002.safetensors");
  EXPECT_EQ(viewText(checkpoint.tensor("model.norm.weight")), "model.language_model.norm.weight");
  EXPECT_EQ(viewText(checkpoint.tensor("lm_head.weight")), "lm_head.weight");
  EXPECT_EQ(checkpoint.totalBytes(), std::string("lm_head.weight").size() +
                                         std::string("model.language_model.embed_tokens.weight").size() +
                                         std::string("model.language_model.norm.weight").size());
  ASSERT_EQ(checkpoint.shards().size(), 2u);
  EXPECT_EQ(checkpoint.shards()[0].path().filename(), "model-00001-of-00002.safetensors");
}

TEST_F(CheckpointTest, IdentityMappingKeepsEveryTensor) {
  writeSharded();
  const auto checkpoint = Checkpoint::open(dir / "model.safetensors.index.json", NameMapping::identity());
  EXPECT_EQ(checkpoint.names().size(), 5u);
  EXPECT_TRUE(checkpoint.contains("mtp.fc.weight"));
}

TEST_F(CheckpointTest, ViewsPointIntoTheMappingWithoutCopying) {
  writeSharded();
  const auto checkpoint = Checkpoint::open(dir.path());
  const auto view = checkpoint.tensor("model.embed_tokens.weight");
  const auto file = checkpoint.shards()[0].fileBytes();
  EXPECT_EQ(view.bytes().data(), file.data() + view.info().fileOffset);
  // Copies of a checkpoint share the mapping, so views outlive the original.
  std::optional<Checkpoint> copy(checkpoint);
  const auto fromCopy = copy->tensor("model.embed_tokens.weight");
  EXPECT_EQ(fromCopy.data(), view.data());
}

TEST_F(CheckpointTest, HeaderShaCoversEveryShardHeaderInNameOrder) {
  writeSharded();
  const auto checkpoint = Checkpoint::open(dir.path());
  Sha256 expected;
  for (const auto& shard : checkpoint.shards()) expected.update(shard.rawHeader());
  EXPECT_EQ(checkpoint.headerSha256(), expected.hexDigest());
  EXPECT_EQ(Checkpoint::open(dir.path()).headerSha256(), checkpoint.headerSha256());
  writeShard(dir / "model-00002-of-00002.safetensors", {"model.language_model.norm.weight", "mtp.fc.weighT"});
  writeFile(dir / "model.safetensors.index.json",
            indexJson({{"model.language_model.norm.weight", "model-00002-of-00002.safetensors"}}));
  EXPECT_NE(Checkpoint::open(dir.path()).headerSha256(), checkpoint.headerSha256());
}

TEST_F(CheckpointTest, SingleFileWinsOverAnIndex) {
  writeSharded();
  writeShard(dir / "model.safetensors", {"only"});
  EXPECT_EQ(Checkpoint::open(dir.path()).names(), std::vector<std::string>{"only"});
  EXPECT_EQ(Checkpoint::open(dir / "model.safetensors").names(), std::vector<std::string>{"only"});
}

TEST_F(CheckpointTest, MissingTensorNamesCheckpointAndTensor) {
  writeShard(dir / "model.safetensors", {"a"});
  const auto checkpoint = Checkpoint::open(dir.path());
  const auto error = catchError<ValidationError>([&] { checkpoint.tensor("b"); });
  EXPECT_EQ(error.context().file, dir.path().string());
  EXPECT_EQ(error.context().item, "b");
  EXPECT_THROW(checkpoint.info("b"), ValidationError);
}

TEST_F(CheckpointTest, DirectoryWithoutWeights) {
  const auto error = catchError<IoError>([&] { Checkpoint::open(dir.path()); });
  EXPECT_EQ(error.context().file, dir.path().string());
  EXPECT_THROW(Checkpoint::open(dir / "absent.safetensors"), IoError);
}

TEST_F(CheckpointTest, IndexNamingAMissingShard) {
  const std::string json = indexJson({{"a", "model-00001-of-00001.safetensors"}});
  writeFile(dir / "model.safetensors.index.json", json);
  const auto error = catchError<IoError>([&] { Checkpoint::open(dir.path()); });
  EXPECT_EQ(error.context().file, (dir / "model.safetensors.index.json").string());
  EXPECT_EQ(error.context().item, "a");
  EXPECT_EQ(error.context().byteOffset, json.find("\"a\""));
}

TEST_F(CheckpointTest, IndexNamingATensorItsShardLacks) {
  writeShard(dir / "s1.safetensors", {"a"});
  const std::string json = indexJson({{"a", "s1.safetensors"}, {"b", "s1.safetensors"}});
  writeFile(dir / "model.safetensors.index.json", json);
  const auto error = catchError<FormatError>([&] { Checkpoint::open(dir.path()); });
  EXPECT_EQ(error.context().file, (dir / "model.safetensors.index.json").string());
  EXPECT_EQ(error.context().item, "b");
  EXPECT_EQ(error.context().byteOffset, json.find("\"b\""));
}

// transformers loads every tensor of the shards an index names, listed or not.
TEST_F(CheckpointTest, TensorsMissingFromTheIndexAreStillLoaded) {
  writeShard(dir / "s1.safetensors", {"a", "unlisted"});
  writeFile(dir / "model.safetensors.index.json", indexJson({{"a", "s1.safetensors"}}));
  EXPECT_EQ(Checkpoint::open(dir.path()).names(), (std::vector<std::string>{"a", "unlisted"}));
}

TEST_F(CheckpointTest, IndexWithADuplicateTensor) {
  writeShard(dir / "s1.safetensors", {"a"});
  const std::string json = R"({"weight_map": {"a": "s1.safetensors", "a": "s1.safetensors"}})";
  writeFile(dir / "model.safetensors.index.json", json);
  const auto error = catchError<FormatError>([&] { Checkpoint::open(dir.path()); });
  EXPECT_EQ(error.context().item, "weight_map/a");
  EXPECT_EQ(error.context().byteOffset, json.rfind("\"a\""));
}

TEST_F(CheckpointTest, IndexRulesOnShape) {
  auto expectRejected = [&](const std::string& json, const std::string& item) {
    writeFile(dir / "model.safetensors.index.json", json);
    const auto error = catchError<FormatError>([&] { Checkpoint::open(dir.path()); });
    EXPECT_EQ(error.context().file, (dir / "model.safetensors.index.json").string());
    EXPECT_EQ(error.context().item, item) << error.what();
    EXPECT_TRUE(error.context().byteOffset.has_value());
  };
  expectRejected(R"({"metadata": {}})", "");
  expectRejected(R"({"weight_map": []})", "weight_map");
  expectRejected(R"({"weight_map": {"a": 3}})", "a");
  expectRejected(R"({"weight_map": {"a": "../elsewhere.safetensors"}})", "a");
  expectRejected(R"({"weight_map": {"a": "/abs.safetensors"}})", "a");
  expectRejected(R"({"weight_map": {"a": "x.safetensors"})", "");
}

TEST_F(CheckpointTest, TensorStoredInTwoShards) {
  writeShard(dir / "s1.safetensors", {"a"});
  writeShard(dir / "s2.safetensors", {"a", "a2"});
  writeFile(dir / "model.safetensors.index.json", indexJson({{"a", "s1.safetensors"}, {"a2", "s2.safetensors"}}));
  const auto error = catchError<FormatError>([&] { Checkpoint::open(dir.path()); });
  EXPECT_EQ(error.context().file, (dir / "s2.safetensors").string());
  EXPECT_EQ(error.context().item, "a");
  EXPECT_TRUE(error.context().byteOffset.has_value());
  EXPECT_NE(error.message().find("s1.safetensors"), std::string::npos) << error.what();
}

TEST_F(CheckpointTest, TwoStoredNamesMappingToOne) {
  writeShard(dir / "model.safetensors", {"model.norm.weight", "model.language_model.norm.weight"});
  const auto error = catchError<FormatError>([&] { Checkpoint::open(dir.path()); });
  EXPECT_EQ(error.context().file, (dir / "model.safetensors").string());
  EXPECT_NE(error.message().find("maps to \"model.norm.weight\""), std::string::npos) << error.what();
  EXPECT_EQ(Checkpoint::open(dir.path(), NameMapping::identity()).names().size(), 2u);
}

TEST_F(CheckpointTest, CorruptShardNamesTheShard) {
  writeFile(dir / "model.safetensors", testing::safetensorsBytes(R"({"a":{"dtype":"U8"}})"));
  const auto error = catchError<FormatError>([&] { Checkpoint::open(dir.path()); });
  EXPECT_EQ(error.context().file, (dir / "model.safetensors").string());
  EXPECT_EQ(error.context().item, "a");
  EXPECT_EQ(error.context().byteOffset, 9u);
}

TEST(NameMapping, QwenTextRenamesAndSkips) {
  const auto mapping = NameMapping::qwenText();
  EXPECT_EQ(mapping.map("model.language_model.layers.3.mlp.up_proj.weight"), "model.layers.3.mlp.up_proj.weight");
  EXPECT_EQ(mapping.map("model.layers.0.self_attn.q_proj.weight"), "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(mapping.map("lm_head.weight"), "lm_head.weight");
  EXPECT_EQ(mapping.map("model.visual.blocks.0.attn.qkv.weight"), std::nullopt);
  EXPECT_EQ(mapping.map("mtp.layers.0.input_layernorm.weight"), std::nullopt);
  EXPECT_EQ(mapping.map("model.mtp_like.weight"), "model.mtp_like.weight");
  EXPECT_EQ(NameMapping::identity().map("mtp.fc.weight"), "mtp.fc.weight");
}

}  // namespace
}  // namespace dfi::tensorfile
