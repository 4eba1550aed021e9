#include "io/placement.h"

#include <charconv>
#include <string>

#include <torch/cuda.h>

#include "dfi/base/error.h"

namespace dfi::engine {

at::ScalarType parseComputeDtype(std::string_view text) {
  if (text == "fp32" || text == "float32") return at::kFloat;
  if (text == "bf16" || text == "bfloat16") return at::kBFloat16;
  if (text == "fp16" || text == "float16") return at::kHalf;
  throw UsageError("unknown dtype '" + std::string(text) + "' (expected fp32, bf16 or fp16)", {.item = "dtype"});
}

c10::Device parseDevice(std::string_view text) {
  if (text == "cpu") return c10::Device(c10::kCPU);
  if (text.substr(0, 4) != "cuda")
    throw UsageError("unknown device '" + std::string(text) + "' (expected cpu, cuda or cuda:N)", {.item = "device"});
  int index = 0;
  if (text.size() > 4) {
    const std::string_view digits = text.substr(text[4] == ':' ? 5 : 4);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (text[4] != ':' || digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || index < 0)
      throw UsageError("malformed device '" + std::string(text) + "' (expected cuda:N)", {.item = "device"});
  }
  const int available = torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  if (index >= available)
    throw UsageError("device '" + std::string(text) + "' is not available (" + std::to_string(available) +
                         " CUDA device(s) usable here)",
                     {.item = "device"});
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

Placement placeLayers(const ModelOptions& options, const std::vector<int>& layersPerDevice) {
  if (options.devices.empty()) throw UsageError("no device given", {.item = "devices"});
  std::vector<c10::Device> devices;
  for (const std::string& text : options.devices) devices.push_back(parseDevice(text));
  Placement placement;
  placement.dtype = parseComputeDtype(options.dtype);
  placement.first = devices.front();
  placement.last = devices.back();
  for (std::size_t d = 0; d < devices.size(); ++d)
    placement.layerDevice.insert(placement.layerDevice.end(), layersPerDevice.at(d), devices[d]);
  return placement;
}

}  // namespace dfi::engine
