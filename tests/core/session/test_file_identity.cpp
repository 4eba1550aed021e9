#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <sqlite3.h>

#include "dfi/session/file_identity.h"

using namespace dfi::session;
namespace fs = std::filesystem;

namespace {
fs::path makeDatabase(const std::string& name, const std::string& pragma) {
  const fs::path path = fs::path(::testing::TempDir()) / name;
  fs::remove(path);
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, (pragma + "; CREATE TABLE t(x);").c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  return path;
}
}  // namespace

TEST(FileIdentity, RecognisesOurApplicationId) {
  EXPECT_EQ(sniffFile(makeDatabase("ours.dfi", "PRAGMA application_id=" + std::to_string(kApplicationId))),
            FileKind::Session);
  EXPECT_EQ(sniffFile(makeDatabase("other.db", "PRAGMA application_id=7")), FileKind::OtherSqliteDatabase);
}

TEST(FileIdentity, RejectsNonDatabases) {
  const fs::path text = fs::path(::testing::TempDir()) / "notes.txt";
  std::ofstream(text) << "hello";
  EXPECT_EQ(sniffFile(text), FileKind::NotSqlite);
  EXPECT_EQ(sniffFile("/nonexistent/x.dfi"), FileKind::Unreadable);
}
