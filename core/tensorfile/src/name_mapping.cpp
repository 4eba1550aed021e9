#include "dfi/tensorfile/name_mapping.h"

namespace dfi::tensorfile {

NameMapping NameMapping::identity() { return {}; }

NameMapping NameMapping::qwenText() {
  return {.skippedPrefixes = {"model.visual.", "mtp."},
          .renames = {{.from = "model.language_model.", .to = "model."}}};
}

std::optional<std::string> NameMapping::map(std::string_view stored) const {
  for (const auto& prefix : skippedPrefixes)
    if (stored.starts_with(prefix)) return std::nullopt;
  for (const auto& rename : renames)
    if (stored.starts_with(rename.from)) return rename.to + std::string(stored.substr(rename.from.size()));
  return std::string(stored);
}

}  // namespace dfi::tensorfile
