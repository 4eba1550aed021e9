#include "family_module.h"

#include <stdexcept>

namespace dfi::modelspec::detail {

const std::vector<const FamilyModule*>& familyModules() {
  static const std::vector<const FamilyModule*> modules = {&qwen3Family(), &qwen3_5Family(), &qwen3NextFamily(),
                                                           &llamaFamily(), &gptOssFamily(), &miniMaxM2Family(),
                                                           &glm4MoeFamily(), &gemma4Family(), &deepseekV3Family(),
                                                           &glmMoeDsaFamily()};
  return modules;
}

const FamilyModule& familyModule(TargetFamily family) {
  for (const FamilyModule* m : familyModules())
    if (m->family == family) return *m;
  throw std::logic_error("no module for target family " + std::to_string(static_cast<int>(family)));
}

}  // namespace dfi::modelspec::detail
