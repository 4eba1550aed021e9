#pragma once
// How the live loop drafts and counts the last steps of a response. Torch-free: the run
// options, the settings and the summary name it.

#include <optional>
#include <string_view>

#include "dfi/settings/settings.h"

namespace dfi::engine {

using settings::StepCounting;  // the settings vocabulary's, with its EnumNames

// "dflash" or "full-blocks", the spelling of run's --step-counting and the recorded settings.
std::string_view stepCountingName(StepCounting counting);
std::optional<StepCounting> parseStepCounting(std::string_view text);
// One line for the summary: what the steps of a live run counted.
std::string_view stepCountingDescription(StepCounting counting);

}  // namespace dfi::engine
