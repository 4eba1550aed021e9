#pragma once
// How the live loop drafts and counts the last steps of a response: the settings vocabulary's
// (names by EnumNames<StepCounting>), under the engine's names.

#include "dfi/settings/settings.h"

namespace dfi::engine {

using settings::StepCounting;
using settings::stepCountingDescription;

}  // namespace dfi::engine
