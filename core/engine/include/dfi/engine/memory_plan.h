#pragma once
// What a target will hold on each device before anything is loaded: its layers' parameters in
// the compute dtype, the embeddings on the first device and the head on the last, against what
// the device has free now. `info` prints it; loading a target refuses a placement that does not
// fit, naming the device and the shortfall, instead of failing half-way with an allocator error.
// Torch-free so the CLI can include it cheaply.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dfi/engine/model_options.h"

namespace dfi::tensorfile {
class Checkpoint;
}  // namespace dfi::tensorfile
namespace dfi::modelspec {
struct TargetConfig;
struct TargetParameters;
}  // namespace dfi::modelspec

namespace dfi::engine {

// Contiguous runs of layers per device, split by size: the largest device share (its layers, the
// embeddings on the first device, the head on the last) as small as a contiguous split makes it.
// A mixture-of-experts model's dense first layers, a large vocabulary's embeddings and head, or
// layers of different widths leave the layer count uneven so that the bytes are not. With equal
// layers and nothing else the first devices take one more layer when uneven.
std::vector<int> layersPerDevice(const std::vector<std::uint64_t>& layerSizes, std::uint64_t firstDeviceExtra,
                                 std::uint64_t lastDeviceExtra, int devices);
// The split of `counts`' layers (with its embeddings and head) over `devices` devices.
std::vector<int> layersPerDevice(const modelspec::TargetParameters& counts, int devices);

struct DevicePlan {
  std::string device;
  int firstLayer = 0, layerCount = 0;
  bool embeddings = false, head = false;
  std::uint64_t parameters = 0;
  std::uint64_t bytes = 0;  // the weights in the compute dtype (activations and caches come on top)
  // The most this device can take: its free memory now, capped by ModelOptions::maxMemory.
  // Unknown for a CUDA device this machine does not have.
  std::optional<std::uint64_t> available;
  std::string availableSource;  // "free CUDA memory", "MemAvailable", "--max-memory", ...

  bool fits() const { return !available || bytes <= *available; }
};

struct MemoryPlan {
  std::string dtype;
  std::uint64_t totalParameters = 0;
  std::uint64_t activeParameters = 0;  // per token: k of E routed experts
  std::vector<DevicePlan> devices;
};

MemoryPlan planTargetMemory(const tensorfile::Checkpoint& checkpoint, const modelspec::TargetConfig& config,
                            const ModelOptions& options);

// Throws dfi::UsageError (item "devices") naming the first device that cannot hold its share,
// what it needs, what it has and the shortfall.
void requirePlanFits(const MemoryPlan& plan);

// "1.50 GiB", "12.0 MiB", "3.0 KiB", "512 B".
std::string byteSizeText(std::uint64_t bytes);

// "70GiB", "512MB", "1.5G", "4096" -> bytes (binary and decimal units); UsageError otherwise.
std::uint64_t parseByteSize(const std::string& text);

}  // namespace dfi::engine
