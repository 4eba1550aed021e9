#include "dfi/session/file_identity.h"

#include <array>
#include <cstring>
#include <fstream>

namespace dfi::session {

FileKind sniffFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return FileKind::Unreadable;
  std::array<unsigned char, 100> header{};
  in.read(reinterpret_cast<char*>(header.data()), header.size());
  if (in.gcount() < static_cast<std::streamsize>(header.size())) return FileKind::NotSqlite;
  static constexpr char kMagic[] = "SQLite format 3";  // 16 bytes with its NUL
  if (std::memcmp(header.data(), kMagic, sizeof kMagic) != 0) return FileKind::NotSqlite;
  // The application id is a big-endian 32-bit integer at offset 68 of the header.
  const std::int32_t appId = static_cast<std::int32_t>(
      (std::uint32_t{header[68]} << 24) | (std::uint32_t{header[69]} << 16) |
      (std::uint32_t{header[70]} << 8) | std::uint32_t{header[71]});
  return appId == kApplicationId ? FileKind::Session : FileKind::OtherSqliteDatabase;
}

}  // namespace dfi::session
