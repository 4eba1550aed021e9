// Files that are not sessions, or damaged ones, give a dfi::Error that names the file.

#include <gtest/gtest.h>

#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "dfi/base/error.h"
#include "dfi/session/file_identity.h"
#include "dfi/session/reader.h"
#include "session_test_util.h"

using namespace dfi::session;
namespace fs = std::filesystem;

namespace {

template <typename E>
std::string errorOpening(const std::string& path) {
  try {
    Reader reader(path);
    reader.runs();
  } catch (const E& e) {
    EXPECT_EQ(e.context().file, path);
    return e.what();
  }
  ADD_FAILURE() << "opening " << path << " did not throw";
  return {};
}

void execSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

}  // namespace

TEST(SessionBadFiles, NotASession) {
  const std::string text = testutil::freshPath("notes.txt");
  std::ofstream(text) << "hello, this is not a database at all, but it is long enough to have a header......";
  EXPECT_NE(errorOpening<dfi::FormatError>(text).find("not a session"), std::string::npos);

  const std::string other = testutil::freshPath("other.db");
  execSql(other, "CREATE TABLE t(x)");
  EXPECT_NE(errorOpening<dfi::FormatError>(other).find("not a DFlash Inspector session"), std::string::npos);

  EXPECT_FALSE(errorOpening<dfi::IoError>(testutil::freshPath("missing.dfi")).empty());
}

TEST(SessionBadFiles, NewerSchemaIsNamed) {
  const std::string path = testutil::freshPath("newer.dfi");
  testutil::writeSmallSession(path);
  execSql(path, "PRAGMA user_version=" + std::to_string(kSchemaVersion + 1));
  EXPECT_NE(errorOpening<dfi::FormatError>(path).find("newer"), std::string::npos);
}

TEST(SessionBadFiles, MissingTableIsNamed) {
  const std::string path = testutil::freshPath("notrees.dfi");
  testutil::writeSmallSession(path);
  execSql(path, "DROP TABLE trees");
  EXPECT_NE(errorOpening<dfi::FormatError>(path).find("'trees'"), std::string::npos);
}

TEST(SessionBadFiles, DamagedArraysNameTheColumn) {
  const std::string path = testutil::freshPath("badblob.dfi");
  testutil::writeSmallSession(path);
  execSql(path, "UPDATE steps SET topk_ids = x'010203' WHERE step_id = 3");
  Reader reader(path);
  try {
    reader.step(3);
    FAIL() << "a 3-byte int32 array was accepted";
  } catch (const dfi::FormatError& e) {
    EXPECT_EQ(e.context().item, "steps.topk_ids");
  }
  EXPECT_TRUE(reader.step(4).has_value()) << "other rows stay readable";
  execSql(path, "UPDATE steps SET accepted_count = 99 WHERE step_id = 4");
  try {
    reader.forEachStepSummary(1, [](const StepSummary&) {});
    FAIL() << "a summary with 99 of 15 drafts accepted was accepted";
  } catch (const dfi::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("step 4"), std::string::npos) << e.what();
  }
  execSql(path, "UPDATE trees SET parents = x'0500000000000000' WHERE step_id = 5");
  EXPECT_THROW(reader.tree(5), dfi::FormatError);
  execSql(path, "UPDATE tensor_tiles SET data = x'28b52ffd00' WHERE tile_index = 0");
  EXPECT_THROW(reader.readTensor(1), dfi::FormatError);
}

TEST(SessionBadFiles, TruncatedFileIsAnErrorNotACrash) {
  const std::string path = testutil::freshPath("truncated.dfi");
  testutil::writeSmallSession(path);
  fs::resize_file(path, fs::file_size(path) / 3);
  try {
    Reader reader(path);
    reader.runs();
    for (StepId id = 1; id <= 60; ++id) reader.block(id);
    FAIL() << "a file cut to a third read back completely";
  } catch (const dfi::Error& e) {
    EXPECT_EQ(e.context().file, path);
  }
}
