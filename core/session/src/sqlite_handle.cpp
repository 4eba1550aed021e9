#include "sqlite_handle.h"

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <filesystem>

#include <sqlite3.h>

#include "dfi/base/error.h"
#include "dfi/base/log.h"

namespace dfi::session::detail {
namespace {

// Whether the file system or the process's file-size limit has no room left for `path` and
// its journals. Needed because SQLite reports a write past RLIMIT_FSIZE (EFBIG) or a quota as a
// generic I/O error, and the errno it keeps can be overwritten by its own cleanup calls.
bool outOfSpace(const std::string& path) {
  constexpr std::uint64_t kSlack = 1 << 20;  // more than one batch of pages
  const std::string dir = std::filesystem::path(path).parent_path().string();
  struct statvfs fs {};
  if (::statvfs(dir.empty() ? "." : dir.c_str(), &fs) == 0 &&
      static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize < kSlack)
    return true;
  rlimit limit{};
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return false;
  for (const char* suffix : {"", "-wal", "-journal"}) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path + suffix, ec);
    if (!ec && size + kSlack >= limit.rlim_cur) return true;
  }
  return false;
}

bool isDiskFull(sqlite3* db, int rc, const std::string& path) {
  if ((rc & 0xff) == SQLITE_FULL) return true;
  if ((rc & 0xff) != SQLITE_IOERR || db == nullptr) return false;
  const int err = sqlite3_system_errno(db);
  return err == ENOSPC || err == EFBIG || err == EDQUOT || outOfSpace(path);
}

}  // namespace

Database::Database(std::string path, int flags) : path_(std::move(path)) {
  const int rc = sqlite3_open_v2(path_.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw IoError("cannot open session: " + why, {.file = path_});
  }
  sqlite3_extended_result_codes(db_, 1);
}

Database::~Database() {
  if (db_ && sqlite3_close_v2(db_) != SQLITE_OK)
    logger("session")->warn("{}: closing the database failed", path_);
}

void Database::exec(const std::string& sql, std::string_view item) {
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(rc, item);
}

std::int64_t Database::queryInt(const std::string& sql, std::string_view item) {
  Statement st(*this, sql, std::string(item));
  if (!st.step()) throw FormatError("query returned no row: " + sql, {.file = path_, .item = std::string(item)});
  return st.integer(0);
}

bool Database::inTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

void Database::fail(int rc, std::string_view item) const {
  ErrorContext where{.file = path_, .item = std::string(item)};
  std::string detail = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  // I/O errors carry the OS reason, which is what a user can act on.
  if ((rc & 0xff) == SQLITE_IOERR && db_)
    detail += ", sqlite code " + std::to_string(rc) + ", errno " + std::to_string(sqlite3_system_errno(db_));
  if (isDiskFull(db_, rc, path_)) throw IoError("disk full (" + detail + ")", std::move(where));
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FORMAT:
    case SQLITE_MISMATCH:
    case SQLITE_ERROR:  // our SQL is fixed: it only fails when the file's schema is not ours
      throw FormatError("corrupted or malformed session (" + detail + ")", std::move(where));
    case SQLITE_CONSTRAINT:
      throw ValidationError("record conflicts with one already stored (" + detail + ")", std::move(where));
    case SQLITE_INTERRUPT:
      throw CancelledError("interrupted", std::move(where));
    default:
      throw IoError("I/O failure (" + detail + ")", std::move(where));
  }
}

Statement::Statement(Database& db, std::string_view sql, std::string item)
    : db_(db), item_(std::move(item)) {
  const int rc = sqlite3_prepare_v3(db.get(), sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, item_);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(stmt_);
  fail(rc);
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::parameterIndex(const char* name) const { return sqlite3_bind_parameter_index(stmt_, name); }

void Statement::bind(int index, std::int64_t value) {
  if (const int rc = sqlite3_bind_int64(stmt_, index, value); rc != SQLITE_OK) fail(rc);
}
void Statement::bind(int index, double value) {
  if (const int rc = sqlite3_bind_double(stmt_, index, value); rc != SQLITE_OK) fail(rc);
}
void Statement::bind(int index, std::string_view text) {
  const int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8);
  if (rc != SQLITE_OK) fail(rc);
}
void Statement::bindBlob(int index, std::span<const std::uint8_t> bytes) {
  // An empty span has no data pointer; a zero-length blob still must not be NULL.
  static const std::uint8_t kEmpty = 0;
  const void* data = bytes.empty() ? &kEmpty : bytes.data();
  if (const int rc = sqlite3_bind_blob64(stmt_, index, data, bytes.size(), SQLITE_STATIC); rc != SQLITE_OK)
    fail(rc);
}

std::int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }
std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  const int n = sqlite3_column_bytes(stmt_, column);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n)) : std::string();
}
std::span<const std::uint8_t> Statement::blob(int column) const {
  const auto* p = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt_, column));
  const int n = sqlite3_column_bytes(stmt_, column);
  return p ? std::span<const std::uint8_t>(p, static_cast<std::size_t>(n)) : std::span<const std::uint8_t>();
}
bool Statement::isNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

Transaction::Transaction(Database& db, std::string_view item) : db_(db), item_(item) {
  db_.exec("BEGIN IMMEDIATE", item_);
}
Transaction::~Transaction() {
  if (open_) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}
void Transaction::commit() {
  db_.exec("COMMIT", item_);
  open_ = false;
}

}  // namespace dfi::session::detail
