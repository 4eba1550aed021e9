#include "read_file.h"

#include <fstream>

#include "dfi/base/error.h"

namespace dfi::tokenizer::detail {

std::string readWholeFile(const std::filesystem::path& path, const std::string& what) {
  std::error_code ec;
  // A directory opens as a stream on Linux but has no size; say what it is instead.
  if (std::filesystem::is_directory(path, ec)) throw IoError(what + " is a directory", {.file = path.string()});
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open " + what, {.file = path.string()});
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw IoError("cannot read " + what, {.file = path.string()});
  std::string text(static_cast<std::size_t>(size), '\0');
  in.seekg(0);
  in.read(text.data(), size);
  if (!in) throw IoError("cannot read " + what, {.file = path.string()});
  return text;
}

}  // namespace dfi::tokenizer::detail
