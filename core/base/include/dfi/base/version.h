#pragma once
#include <string>

namespace dfi {

// The project version ("0.1.0") and the git commit it was built from ("abc123def456",
// "-dirty" when built with uncommitted changes, "unknown" outside a git checkout).
std::string version();
std::string gitHash();

}  // namespace dfi
