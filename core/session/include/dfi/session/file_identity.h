#pragma once
// How a .dfi session file identifies itself: it is an SQLite database whose header carries
// our application_id and whose user_version is the schema version.

#include <cstdint>
#include <string>

namespace dfi::session {

// PRAGMA application_id of every .dfi file: the ASCII bytes "DFIS".
inline constexpr std::int32_t kApplicationId = 0x44464953;
// PRAGMA user_version: the schema version this build writes and the newest it reads (1: the
// first; 2: runs gain mode, mask_variant and sliding_window as columns).
inline constexpr std::int32_t kSchemaVersion = 7;

enum class FileKind { Session, NotSqlite, OtherSqliteDatabase, Unreadable };

// Reads only the 100-byte SQLite header; never opens the database.
FileKind sniffFile(const std::string& path);

}  // namespace dfi::session
