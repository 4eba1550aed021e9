#pragma once
// Logging for translation units that must not include spdlog: libtorch ships its own {fmt}
// headers, which clash with the {fmt} spdlog is built against, so engine code that includes
// torch logs pre-formatted text through this instead of dfi/base/log.h.

#include <string>

namespace dfi {

enum class LogLevel { Debug, Info, Warn, Error };

void logText(const std::string& loggerName, LogLevel level, const std::string& text);

}  // namespace dfi
