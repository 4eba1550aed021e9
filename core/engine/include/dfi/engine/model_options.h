#pragma once
// Where and in which precision a model runs, as the command line and the GUI spell it: the
// settings vocabulary's (dfi/settings/settings.h), torch-free so the CLI and protocol carry it.

#include "dfi/settings/settings.h"

namespace dfi::engine {

using settings::ModelOptions;

}  // namespace dfi::engine
