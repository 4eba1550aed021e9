#include "dfi/engine/memory_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <cstdlib>

#include <torch/cuda.h>

#ifdef DFI_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include "dfi/base/error.h"
#include "dfi/tensorfile/checkpoint.h"
#include "dfi/modelspec/parameter_count.h"
#include "dfi/modelspec/target_config.h"
#include "io/placement.h"

namespace dfi::engine {
namespace {

// The kernel's estimate of memory available without swapping (/proc/meminfo MemAvailable).
std::optional<std::uint64_t> hostAvailableBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

std::optional<std::uint64_t> cudaFreeBytes(const c10::Device& device) {
#ifdef DFI_WITH_CUDA
  if (!torch::cuda::is_available() || device.index() >= static_cast<int>(torch::cuda::device_count()))
    return std::nullopt;
  int previous = 0;
  cudaGetDevice(&previous);
  std::size_t free = 0, total = 0;
  const bool ok = cudaSetDevice(device.index() < 0 ? 0 : device.index()) == cudaSuccess &&
                  cudaMemGetInfo(&free, &total) == cudaSuccess;
  cudaSetDevice(previous);
  if (ok) return free;
#else
  (void)device;
#endif
  return std::nullopt;
}

// A device as written, without the availability check of parseDevice: `info` plans for a GPU
// server from a machine that may have none.
c10::Device deviceOf(const std::string& text) {
  if (text == "cpu") return c10::Device(c10::kCPU);
  try {
    return c10::Device(text);
  } catch (const std::exception&) {
    throw UsageError("malformed device '" + text + "' (expected cpu, cuda or cuda:N)", {.item = "devices"});
  }
}

void setAvailable(DevicePlan& plan, const ModelOptions& options) {
  const c10::Device device = deviceOf(plan.device);
  if (device.is_cpu()) {
    plan.available = hostAvailableBytes();
    plan.availableSource = "MemAvailable";
  } else {
    plan.available = cudaFreeBytes(device);
    plan.availableSource = plan.available ? "free CUDA memory" : "";
  }
  const auto cap = options.maxMemory.find(plan.device);
  if (cap != options.maxMemory.end() && (!plan.available || cap->second < *plan.available)) {
    plan.available = cap->second;
    plan.availableSource = "--max-memory";
  }
}

std::size_t bytesPerParameter(const std::string& dtype) {
  return at::elementSize(parseComputeDtype(dtype));
}

}  // namespace

namespace {

// The layers per device when each device takes as many as fit in `capacity`, in order; nullopt
// when they do not all fit on `devices` devices.
std::optional<std::vector<int>> fillInOrder(const std::vector<std::uint64_t>& sizes, std::uint64_t first,
                                            std::uint64_t last, int devices, std::uint64_t capacity) {
  std::vector<int> counts(static_cast<std::size_t>(devices), 0);
  int device = 0;
  std::uint64_t load = first + (devices == 1 ? last : 0);
  if (load > capacity) return std::nullopt;
  for (const std::uint64_t size : sizes) {
    while (load + size > capacity) {
      if (++device == devices) return std::nullopt;
      load = device + 1 == devices ? last : 0;
      if (load > capacity) return std::nullopt;
    }
    load += size;
    ++counts[static_cast<std::size_t>(device)];
  }
  return counts;
}

}  // namespace

std::vector<int> layersPerDevice(const std::vector<std::uint64_t>& layerSizes, std::uint64_t firstDeviceExtra,
                                 std::uint64_t lastDeviceExtra, int devices) {
  if (devices <= 0) return {};
  // The smallest capacity every device can keep to, by bisection: filling in order is feasible
  // for every capacity above it and for none below.
  std::uint64_t low = 0, high = firstDeviceExtra + lastDeviceExtra;
  for (const std::uint64_t size : layerSizes) high += size;
  while (low < high) {
    const std::uint64_t middle = low + (high - low) / 2;
    if (fillInOrder(layerSizes, firstDeviceExtra, lastDeviceExtra, devices, middle))
      high = middle;
    else
      low = middle + 1;
  }
  return *fillInOrder(layerSizes, firstDeviceExtra, lastDeviceExtra, devices, high);
}

std::vector<int> layersPerDevice(const modelspec::TargetParameters& counts, int devices) {
  std::vector<std::uint64_t> sizes;
  for (const modelspec::PartParameters& layer : counts.layers) sizes.push_back(layer.total);
  // A tied head on one device is the embeddings themselves; on another, a copy (counted in head).
  const std::uint64_t head = counts.head.total - (counts.headIsEmbeddings && devices == 1 ? counts.embeddings.total : 0);
  return layersPerDevice(sizes, counts.embeddings.total, head, devices);
}

MemoryPlan planTargetMemory(const tensorfile::Checkpoint& checkpoint, const modelspec::TargetConfig& config,
                            const ModelOptions& options) {
  if (options.devices.empty()) throw UsageError("no device given", {.item = "devices"});
  for (const auto& [device, bytes] : options.maxMemory)
    if (std::find(options.devices.begin(), options.devices.end(), device) == options.devices.end())
      throw UsageError("--max-memory names " + device + ", which is not one of the devices", {.item = "max_memory"});
  const modelspec::TargetParameters counts = modelspec::countTargetParameters(checkpoint, config);
  const std::size_t size = bytesPerParameter(options.dtype);
  MemoryPlan plan;
  plan.dtype = options.dtype;
  plan.totalParameters = counts.total();
  plan.activeParameters = counts.active();
  const std::vector<int> perDevice = layersPerDevice(counts, static_cast<int>(options.devices.size()));
  int layer = 0;
  for (std::size_t d = 0; d < options.devices.size(); ++d) {
    DevicePlan& device = plan.devices.emplace_back();
    device.device = options.devices[d];
    device.firstLayer = layer;
    device.layerCount = perDevice[d];
    for (int i = 0; i < device.layerCount; ++i) device.parameters += counts.layers[static_cast<std::size_t>(layer++)].total;
    device.embeddings = d == 0;
    device.head = d + 1 == options.devices.size();
    if (device.embeddings) device.parameters += counts.embeddings.total;
    // A tied head on the embeddings' own device is the same tensor; elsewhere it is a copy.
    if (device.head)
      device.parameters += counts.head.total - (counts.headIsEmbeddings && d == 0 ? counts.embeddings.total : 0);
    device.bytes = device.parameters * size;
    setAvailable(device, options);
  }
  return plan;
}

void requirePlanFits(const MemoryPlan& plan) {
  for (const DevicePlan& device : plan.devices) {
    if (device.fits()) continue;
    throw UsageError(device.device + " cannot hold its share of the target: " + byteSizeText(device.bytes) +
                         " of " + plan.dtype + " weights (layers " + std::to_string(device.firstLayer) + "-" +
                         std::to_string(device.firstLayer + device.layerCount - 1) +
                         (device.embeddings ? ", embeddings" : "") + (device.head ? ", head" : "") + ") against " +
                         byteSizeText(*device.available) + " (" + device.availableSource + "): " +
                         byteSizeText(device.bytes - *device.available) +
                         " short. Add a device to --devices, use a smaller --dtype, or free memory there",
                     {.item = "devices"});
  }
}

std::string byteSizeText(std::uint64_t bytes) {
  char text[64];
  if (bytes >= (1ull << 30))
    std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / static_cast<double>(1ull << 30));
  else if (bytes >= (1ull << 20))
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(1ull << 20));
  else if (bytes >= (1ull << 10))
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / static_cast<double>(1ull << 10));
  else
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  return text;
}

std::uint64_t parseByteSize(const std::string& text) {
  const auto fail = [&] {
    return UsageError("malformed size '" + text + "' (expected a number with an optional unit: 512MB, 70GiB, 1.5G)",
                      {.item = "max_memory"});
  };
  const char* begin = text.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(number) || number < 0) throw fail();
  std::string unit = end;
  unit.erase(0, unit.find_first_not_of(' '));
  static const std::vector<std::pair<std::string, double>> units = {
      {"", 1},          {"B", 1},
      {"KB", 1e3},      {"MB", 1e6},      {"GB", 1e9},      {"TB", 1e12},
      {"K", 1024.0},    {"M", 1048576.0}, {"G", 1073741824.0}, {"T", 1099511627776.0},
      {"KiB", 1024.0},  {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  for (const auto& [name, scale] : units)
    if (unit == name) return static_cast<std::uint64_t>(std::llround(number * scale));
  throw fail();
}

}  // namespace dfi::engine
