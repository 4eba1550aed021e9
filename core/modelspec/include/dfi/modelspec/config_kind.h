#pragma once
// Which kind of model a config.json describes, so `dflash-eval info PATH` and the loaders
// can pick the right parser without being told.

#include <filesystem>
#include <string>
#include <string_view>

namespace dfi::modelspec {

enum class ConfigKind { Target, Drafter };

std::string_view configKindName(ConfigKind kind);

// Drafter when the config carries DFlash markers (a "*DFlash*" architecture, dflash_config,
// block_size); target otherwise (the target parser then names what is unsupported).
// FormatError when the text is not a JSON object.
ConfigKind detectConfigKind(std::string_view jsonText, const std::string& origin);
// Same for a config file; IoError when it cannot be read.
ConfigKind detectConfigKindOf(const std::filesystem::path& configJson);

// A model directory's config.json, or the path itself when it names a file.
std::filesystem::path configPathOf(const std::filesystem::path& dirOrConfig);

}  // namespace dfi::modelspec
