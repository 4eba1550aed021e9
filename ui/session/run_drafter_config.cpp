#include "session/run_drafter_config.h"

#include "dfi/base/error.h"
#include "dfi/base/log.h"

namespace dfi::ui {

std::optional<modelspec::DrafterConfig> runDrafterConfig(const session::RunRecord& run) {
  if (run.drafter.configJson.empty()) return std::nullopt;
  try {
    return modelspec::parseDrafterConfigText(run.drafter.configJson, run.drafter.path);
  } catch (const dfi::Error& e) {
    dfi::logger("ui")->warn("run {}: its drafter config is unreadable here ({}); its views use the defaults",
                            run.runId, e.what());
    return std::nullopt;
  }
}

}  // namespace dfi::ui
