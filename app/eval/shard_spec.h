#pragma once
// Which part of a prompt set this process evaluates: `--shard i/N` as given, or `--shard auto`
// from the launcher that started it, so one command line runs unchanged on every rank of
// torchrun or srun. Torch-free and environment-injected, so it is tested without a launcher.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dfi::eval {

struct ShardSpec {
  int index = 0;
  int count = 1;
  bool fromLauncher = false;  // resolved by `auto`
};

// Reads an environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
EnvLookup processEnvironment();

// "i/N" with 0 <= i < N, or "auto": torchrun's RANK/WORLD_SIZE first (the innermost launcher
// when torchrun runs under srun), else Slurm's SLURM_PROCID/SLURM_NTASKS. Throws
// dfi::UsageError naming --shard (and the variables) for anything else.
ShardSpec resolveShard(std::string_view text, const EnvLookup& env);

// A warning when a launcher started several processes but `text` (the --shard given) makes
// each of them evaluate every prompt; nullopt otherwise.
std::optional<std::string> unshardedLauncherWarning(std::string_view text, const EnvLookup& env);

// The session file of a shard. "{shard}" in `path` becomes "i-of-N"; without it, an `auto`
// shard of several gets ".shard-i-of-N" before the extension (every rank is given the same
// path and must not write the same file). Explicit i/N paths are used as given.
std::string shardSessionPath(const std::string& path, const ShardSpec& shard);

// "cuda:local" in a device list becomes this process's GPU: cuda:<LOCAL_RANK (torchrun), else
// SLURM_LOCALID, else 0> modulo the visible device count, so eight ranks on a node take eight
// GPUs, and a rank whose launcher already narrowed CUDA_VISIBLE_DEVICES to one takes cuda:0.
// Other entries are kept; a count of 0 leaves the rank's index for the engine to refuse.
std::vector<std::string> resolveLocalDevices(const std::vector<std::string>& devices, const EnvLookup& env,
                                             int visibleCudaDevices);

}  // namespace dfi::eval
