#pragma once
// Named spdlog loggers, one per library ("tensorfile", "engine", "ui"...). They all share one
// sink list so that a front end (the CLI's stderr, the GUI's log dock) sees every library.

#include <memory>
#include <string>

#include <spdlog/logger.h>

namespace dfi {

// Returns the logger called `name`, creating it on first use with the shared sinks.
std::shared_ptr<spdlog::logger> logger(const std::string& name);

// Adds a sink to every existing and future logger (the GUI's log dock uses this).
void addLogSink(std::shared_ptr<spdlog::sinks::sink> sink);

// Sets the level of every existing and future logger.
void setLogLevel(spdlog::level::level_enum level);

}  // namespace dfi
