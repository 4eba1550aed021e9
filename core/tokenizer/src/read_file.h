#pragma once
// Whole-file reads for tokenizer.json, tokenizer_config.json and chat_template.jinja.
// Internal to dfi_tokenizer.

#include <filesystem>
#include <string>

namespace dfi::tokenizer::detail {

// Throws IoError naming the file (`what` says which kind, e.g. "tokenizer file") when it is
// missing, a directory or unreadable.
std::string readWholeFile(const std::filesystem::path& path, const std::string& what);

}  // namespace dfi::tokenizer::detail
