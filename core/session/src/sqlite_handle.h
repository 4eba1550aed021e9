#pragma once
// RAII wrappers over the SQLite C API that turn every failure into a dfi::Error naming the
// file and the table, so no caller handles raw return codes.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace dfi::session::detail {

class Database {
 public:
  // flags: SQLITE_OPEN_* ; opening never creates tables.
  Database(std::string path, int flags);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }

  void exec(const std::string& sql, std::string_view item = {});
  // Runs a one-row, one-integer query ("PRAGMA user_version").
  std::int64_t queryInt(const std::string& sql, std::string_view item = {});
  // Throws the dfi::Error matching `rc` (disk full, corrupt, ...) for this file and item.
  [[noreturn]] void fail(int rc, std::string_view item) const;
  bool inTransaction() const;

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

class Statement {
 public:
  Statement(Database& db, std::string_view sql, std::string item);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // True while a row is available; false when done. Throws on error.
  bool step();
  // Executes a statement that returns no rows, then resets it for reuse.
  void run();
  void reset();

  // Resets now and again when the guard dies, so that a statement never keeps a read
  // transaction open after its caller is done (an open one pins the WAL and hides new data).
  class Use {
   public:
    explicit Use(Statement& st) : st_(st) { st_.reset(); }
    ~Use() { st_.reset(); }
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

   private:
    Statement& st_;
  };
  [[nodiscard]] Use use() { return Use(*this); }

  // Index of a named parameter (":run"), 0 when the statement does not use it.
  int parameterIndex(const char* name) const;
  void bind(int index, std::int64_t value);
  void bind(int index, double value);
  void bind(int index, std::string_view text);
  // The bytes must stay alive until the statement is stepped (bound without a copy).
  void bindBlob(int index, std::span<const std::uint8_t> bytes);

  std::int64_t integer(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  std::span<const std::uint8_t> blob(int column) const;
  bool isNull(int column) const;

  const std::string& item() const { return item_; }
  [[noreturn]] void fail(int rc) const { db_.fail(rc, item_); }

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string item_;
};

// RAII transaction for one-shot jobs (schema creation, merge): rolls back unless committed.
class Transaction {
 public:
  explicit Transaction(Database& db, std::string_view item);
  ~Transaction();
  void commit();

 private:
  Database& db_;
  std::string item_;
  bool open_ = true;
};

}  // namespace dfi::session::detail
