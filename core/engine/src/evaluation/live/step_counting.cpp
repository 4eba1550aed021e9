#include "dfi/engine/step_counting.h"

#include "dfi/settings/settings_fields.h"

namespace dfi::engine {

std::string_view stepCountingName(StepCounting counting) {
  return enumName(counting);
}

std::optional<StepCounting> parseStepCounting(std::string_view text) {
  return parseEnum<StepCounting>(text);
}

std::string_view stepCountingDescription(StepCounting counting) {
  return counting == StepCounting::Dflash
             ? "dflash 0.1.0's: the last block shortened to the token budget, a step's tokens counted up to "
               "the budget and the first stop token"
             : "full blocks: every block of B slots, its accepted drafts and bonus counted in full "
               "(past the budget or a stop token too)";
}

}  // namespace dfi::engine
