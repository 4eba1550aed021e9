#include "kernels/kernel_path.h"

#include <cstdlib>
#include <string>

#include "dfi/base/error.h"

namespace dfi::engine {

bool parseCpuKernelsSwitch(const char* value) {
  if (value == nullptr) return true;
  const std::string text = value;
  if (text.empty() || text == "on" || text == "1") return true;
  if (text == "off" || text == "0") return false;
  throw UsageError("DFI_CPU_KERNELS is '" + text + "'; use on (the default) or off (the ATen path a GPU takes)",
                   {.item = "DFI_CPU_KERNELS"});
}

bool cpuKernelsEnabled() {
  static const bool enabled = parseCpuKernelsSwitch(std::getenv("DFI_CPU_KERNELS"));
  return enabled;
}

}  // namespace dfi::engine
