#pragma once
// Which part of a prompt set this process evaluates: `--shard i/N` as given, or `--shard auto`
// from the launcher that started it, so one command line runs unchanged on every rank of
// torchrun or srun. Torch-free and environment-injected, so it is tested without a launcher.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

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

// The session file of a shard. "{shard}" in `path` becomes "i-of-N"; without it, an `auto`
// shard of several gets ".shard-i-of-N" before the extension (every rank is given the same
// path and must not write the same file). Explicit i/N paths are used as given.
std::string shardSessionPath(const std::string& path, const ShardSpec& shard);

}  // namespace dfi::eval
