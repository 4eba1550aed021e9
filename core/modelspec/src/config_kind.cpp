#include "dfi/modelspec/config_kind.h"

#include "config_json.h"

namespace dfi::modelspec {

std::string_view configKindName(ConfigKind kind) {
  return kind == ConfigKind::Drafter ? "drafter" : "target";
}

ConfigKind detectConfigKind(std::string_view jsonText, const std::string& origin) {
  const nlohmann::json root = detail::parseConfigJson(jsonText, origin);
  if (root.contains("dflash_config") || root.contains("block_size")) return ConfigKind::Drafter;
  if (auto it = root.find("architectures"); it != root.end() && it->is_array()) {
    for (const auto& name : *it)
      if (name.is_string() && name.get<std::string>().find("DFlash") != std::string::npos) return ConfigKind::Drafter;
  }
  return ConfigKind::Target;
}

ConfigKind detectConfigKindOf(const std::filesystem::path& configJson) {
  return detectConfigKind(detail::readConfigFile(configJson), configJson.string());
}

std::filesystem::path configPathOf(const std::filesystem::path& dirOrConfig) {
  return std::filesystem::is_directory(dirOrConfig) ? dirOrConfig / "config.json" : dirOrConfig;
}

}  // namespace dfi::modelspec
