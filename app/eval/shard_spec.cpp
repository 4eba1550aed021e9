#include "shard_spec.h"

#include <charconv>
#include <cstdlib>
#include <filesystem>

#include "dfi/base/error.h"

namespace dfi::eval {
namespace {

std::optional<int> parseCount(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

void checkRange(int index, int count, const std::string& origin) {
  if (count < 1 || index < 0 || index >= count)
    throw UsageError("--shard: " + origin + " gives shard " + std::to_string(index) + "/" + std::to_string(count) +
                     ", outside 0 <= i < N");
}

// One launcher's pair of variables: both set (a shard), neither (not this launcher), or one
// only (a broken environment, refused rather than guessed).
std::optional<ShardSpec> fromPair(const EnvLookup& env, const char* rankName, const char* sizeName) {
  const auto rank = env(rankName), size = env(sizeName);
  if (!rank && !size) return std::nullopt;
  const std::string origin = std::string(rankName) + "/" + sizeName;
  if (!rank || !size)
    throw UsageError("--shard auto: " + std::string(rank ? sizeName : rankName) + " is not set but " +
                     (rank ? rankName : sizeName) + " is");
  const auto index = parseCount(*rank), count = parseCount(*size);
  if (!index || !count)
    throw UsageError("--shard auto: " + origin + " = '" + *rank + "'/'" + *size + "' are not integers");
  checkRange(*index, *count, origin);
  return ShardSpec{*index, *count, true};
}

}  // namespace

EnvLookup processEnvironment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
}

ShardSpec resolveShard(std::string_view text, const EnvLookup& env) {
  if (text == "auto") {
    if (auto shard = fromPair(env, "RANK", "WORLD_SIZE")) return *shard;
    if (auto shard = fromPair(env, "SLURM_PROCID", "SLURM_NTASKS")) return *shard;
    throw UsageError("--shard auto: neither torchrun's RANK/WORLD_SIZE nor Slurm's SLURM_PROCID/SLURM_NTASKS is "
                     "set; give --shard i/N");
  }
  const auto slash = text.find('/');
  const auto index = slash == std::string_view::npos ? std::nullopt : parseCount(text.substr(0, slash));
  const auto count = slash == std::string_view::npos ? std::nullopt : parseCount(text.substr(slash + 1));
  if (!index || !count) throw UsageError("--shard: '" + std::string(text) + "' is not i/N or auto");
  checkRange(*index, *count, "'" + std::string(text) + "'");
  return {*index, *count, false};
}

std::optional<std::string> unshardedLauncherWarning(std::string_view text, const EnvLookup& env) {
  if (text == "auto" || resolveShard(text, env).count > 1) return std::nullopt;
  for (const char* name : {"WORLD_SIZE", "SLURM_NTASKS"}) {
    const auto value = env(name);
    const auto count = value ? parseCount(*value) : std::nullopt;
    if (count && *count > 1)
      return std::string(name) + "=" + *value + " is set but --shard is " + std::string(text) +
             ": every process evaluates every prompt; --shard auto splits them";
  }
  return std::nullopt;
}

std::string shardSessionPath(const std::string& path, const ShardSpec& shard) {
  const std::string tag = std::to_string(shard.index) + "-of-" + std::to_string(shard.count);
  if (const auto at = path.find("{shard}"); at != std::string::npos)
    return std::string(path).replace(at, 7, tag);
  if (!shard.fromLauncher || shard.count == 1) return path;
  std::filesystem::path p(path);
  const std::string extension = p.extension().string();
  p.replace_filename(p.stem().string() + ".shard-" + tag + extension);
  return p.string();
}

std::vector<std::string> resolveLocalDevices(const std::vector<std::string>& devices, const EnvLookup& env,
                                             int visibleCudaDevices) {
  std::vector<std::string> out;
  for (const std::string& device : devices) {
    if (device != "cuda:local") {
      out.push_back(device);
      continue;
    }
    int local = 0;
    for (const char* name : {"LOCAL_RANK", "SLURM_LOCALID"}) {
      const auto value = env(name);
      if (!value) continue;
      const auto parsed = parseCount(*value);
      if (!parsed || *parsed < 0)
        throw UsageError("--device cuda:local: " + std::string(name) + " = '" + *value + "' is not a local rank");
      local = *parsed;
      break;
    }
    out.push_back("cuda:" + std::to_string(visibleCudaDevices > 0 ? local % visibleCudaDevices : local));
  }
  return out;
}

}  // namespace dfi::eval
