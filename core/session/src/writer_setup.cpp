#include "writer_setup.h"

#include <filesystem>

#include <sqlite3.h>

#include "dfi/base/error.h"
#include "schema.h"

namespace dfi::session::detail {

std::unique_ptr<Database> openForWriting(const std::string& path, OpenMode mode) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (mode == OpenMode::CreateNew && exists)
    throw UsageError("session file already exists (choose another name or overwrite)", {.file = path});
  if (mode == OpenMode::Append && !exists) throw IoError("session file does not exist", {.file = path});
  if (mode == OpenMode::Overwrite)
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path + suffix, ec);

  auto db = std::make_unique<Database>(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  sqlite3_busy_timeout(db->get(), 5000);
  if (mode == OpenMode::Append) {
    migrateSchema(*db, checkSchema(*db));
  } else {
    // Tiles of up to 128 KB compress to tens of KB: larger pages mean fewer overflow pages.
    db->exec("PRAGMA page_size=8192", "schema");
    createSchema(*db);
  }
  db->exec("PRAGMA journal_mode=WAL", "schema");
  // WAL + NORMAL: a commit survives a process crash (what the crash test checks); only a power
  // loss can drop the last commits, and it never corrupts the file.
  db->exec("PRAGMA synchronous=NORMAL", "schema");
  db->exec("PRAGMA cache_size=-16384", "schema");
  // Checkpoint every 32 MB of WAL rather than SQLite's 8 MB: fewer fsync pauses while recording.
  db->exec("PRAGMA wal_autocheckpoint=4096", "schema");
  return db;
}

}  // namespace dfi::session::detail
