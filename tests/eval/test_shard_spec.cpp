// --shard i/N|auto: explicit shards validated, auto taken from torchrun or Slurm variables
// (injected here, so no launcher is needed), and where each shard's session goes.

#include <gtest/gtest.h>

#include <map>

#include "dfi/base/error.h"
#include "shard_spec.h"

using namespace dfi;
using namespace dfi::eval;

namespace {

EnvLookup envOf(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

std::string usageMessage(std::string_view text, const EnvLookup& env) {
  try {
    resolveShard(text, env);
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted --shard " << text;
  return {};
}

}  // namespace

TEST(ShardSpec, ExplicitShardsAreValidated) {
  const auto none = envOf({});
  const ShardSpec s = resolveShard("2/8", none);
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 8);
  EXPECT_FALSE(s.fromLauncher);
  for (const char* bad : {"8/8", "-1/4", "1/0", "a/b", "1/2x", "3", "/4", "1/", ""})
    EXPECT_NE(usageMessage(bad, none).find("--shard"), std::string::npos) << bad;
}

TEST(ShardSpec, AutoReadsTorchrunFirstThenSlurm) {
  const ShardSpec torchrun = resolveShard("auto", envOf({{"RANK", "3"}, {"WORLD_SIZE", "8"}}));
  EXPECT_EQ(torchrun.index, 3);
  EXPECT_EQ(torchrun.count, 8);
  EXPECT_TRUE(torchrun.fromLauncher);
  const ShardSpec slurm = resolveShard("auto", envOf({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "16"}}));
  EXPECT_EQ(slurm.index, 5);
  EXPECT_EQ(slurm.count, 16);
  // torchrun started by srun: torchrun's ranks are the processes that evaluate.
  const ShardSpec both = resolveShard(
      "auto", envOf({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}));
  EXPECT_EQ(both.index, 1);
  EXPECT_EQ(both.count, 2);
}

TEST(ShardSpec, AutoRefusesMissingHalfOrBadValues) {
  EXPECT_NE(usageMessage("auto", envOf({})).find("RANK/WORLD_SIZE"), std::string::npos);
  EXPECT_NE(usageMessage("auto", envOf({})).find("SLURM_PROCID/SLURM_NTASKS"), std::string::npos);
  EXPECT_NE(usageMessage("auto", envOf({{"RANK", "0"}})).find("WORLD_SIZE is not set"), std::string::npos);
  EXPECT_NE(usageMessage("auto", envOf({{"SLURM_NTASKS", "4"}})).find("SLURM_PROCID is not set"), std::string::npos);
  EXPECT_NE(usageMessage("auto", envOf({{"RANK", "x"}, {"WORLD_SIZE", "2"}})).find("not integers"), std::string::npos);
  EXPECT_NE(usageMessage("auto", envOf({{"RANK", "4"}, {"WORLD_SIZE", "4"}})).find("RANK/WORLD_SIZE"),
            std::string::npos);
}

TEST(ShardSpec, SessionPathPerShard) {
  EXPECT_EQ(shardSessionPath("out/eval.dfi", {3, 8, true}), "out/eval.shard-3-of-8.dfi");
  EXPECT_EQ(shardSessionPath("eval-{shard}.dfi", {3, 8, true}), "eval-3-of-8.dfi");
  EXPECT_EQ(shardSessionPath("eval-{shard}.dfi", {1, 2, false}), "eval-1-of-2.dfi");
  EXPECT_EQ(shardSessionPath("shard1.dfi", {1, 2, false}), "shard1.dfi") << "explicit i/N: the path as given";
  EXPECT_EQ(shardSessionPath("eval.dfi", {0, 1, true}), "eval.dfi") << "a launcher with one process";
}

TEST(ShardSpec, LocalDeviceFromTheLauncher) {
  using Devices = std::vector<std::string>;
  const Devices local{"cuda:local"};
  EXPECT_EQ(resolveLocalDevices(local, envOf({{"LOCAL_RANK", "3"}}), 8), Devices{"cuda:3"});
  EXPECT_EQ(resolveLocalDevices(local, envOf({{"SLURM_LOCALID", "5"}}), 8), Devices{"cuda:5"});
  EXPECT_EQ(resolveLocalDevices(local, envOf({{"LOCAL_RANK", "1"}, {"SLURM_LOCALID", "0"}}), 8), Devices{"cuda:1"});
  // srun --gpus-per-task=1: each rank sees one GPU, its cuda:0
  EXPECT_EQ(resolveLocalDevices(local, envOf({{"SLURM_LOCALID", "5"}}), 1), Devices{"cuda:0"});
  EXPECT_EQ(resolveLocalDevices(local, envOf({}), 8), Devices{"cuda:0"}) << "no launcher: local rank 0";
  EXPECT_EQ(resolveLocalDevices(Devices{"cuda:0", "cuda:1"}, envOf({{"LOCAL_RANK", "3"}}), 8),
            (Devices{"cuda:0", "cuda:1"}));
  EXPECT_THROW(resolveLocalDevices(local, envOf({{"LOCAL_RANK", "x"}}), 8), UsageError);
}

TEST(ShardSpec, WarnsWhenALauncherRanksRunUnsharded) {
  const auto torchrun = envOf({{"RANK", "1"}, {"WORLD_SIZE", "4"}});
  const auto warning = unshardedLauncherWarning("0/1", torchrun);
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("WORLD_SIZE=4"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("--shard auto"), std::string::npos) << *warning;
  EXPECT_TRUE(unshardedLauncherWarning("0/1", envOf({{"SLURM_NTASKS", "8"}})).has_value());
  EXPECT_FALSE(unshardedLauncherWarning("auto", torchrun).has_value());
  EXPECT_FALSE(unshardedLauncherWarning("1/4", torchrun).has_value());
  EXPECT_FALSE(unshardedLauncherWarning("0/1", envOf({{"WORLD_SIZE", "1"}})).has_value());
  EXPECT_FALSE(unshardedLauncherWarning("0/1", envOf({})).has_value());
}
