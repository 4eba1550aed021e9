#include "dfi/base/log.h"
#include "dfi/base/log_text.h"

#include <mutex>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace dfi {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<spdlog::sink_ptr> sinks{std::make_shared<spdlog::sinks::stderr_color_sink_mt>()};
  spdlog::level::level_enum level = spdlog::level::info;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

std::shared_ptr<spdlog::logger> logger(const std::string& name) {
  auto& reg = registry();
  std::lock_guard lock(reg.mutex);
  if (auto existing = spdlog::get(name)) return existing;
  auto created = std::make_shared<spdlog::logger>(name, reg.sinks.begin(), reg.sinks.end());
  created->set_level(reg.level);
  spdlog::register_logger(created);
  return created;
}

void addLogSink(std::shared_ptr<spdlog::sinks::sink> sink) {
  auto& reg = registry();
  std::lock_guard lock(reg.mutex);
  reg.sinks.push_back(sink);
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& l) { l->sinks().push_back(sink); });
}

void setLogLevel(spdlog::level::level_enum level) {
  auto& reg = registry();
  std::lock_guard lock(reg.mutex);
  reg.level = level;
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& l) { l->set_level(level); });
}

}  // namespace dfi

namespace dfi {

void logText(const std::string& loggerName, LogLevel level, const std::string& text) {
  static constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::debug, spdlog::level::info,
                                                          spdlog::level::warn, spdlog::level::err};
  logger(loggerName)->log(kLevels[static_cast<int>(level)], text);
}

}  // namespace dfi
