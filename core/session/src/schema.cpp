#include "schema.h"

#include <array>
#include <string>

#include "dfi/base/error.h"
#include "dfi/session/file_identity.h"
#include "sql_table.h"

namespace dfi::session::detail {
namespace {

// What is not a record table: the file's metadata, the tensors' compressed tiles and the
// indexes of the queries the reader makes.
constexpr const char* kOtherDdl = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tensor_tiles(
  tensor_id INTEGER NOT NULL, tile_index INTEGER NOT NULL, raw_bytes INTEGER NOT NULL,
  data BLOB NOT NULL, PRIMARY KEY(tensor_id, tile_index));
CREATE UNIQUE INDEX steps_by_block ON steps(run_id, prompt_id, step_index);
CREATE INDEX statistics_by_step ON statistics(step_id, run_id);
CREATE INDEX tensors_by_step ON tensors(step_id, run_id);
CREATE INDEX annotations_by_run ON annotations(run_id);
)sql";

// Every record that has a table of its own.
template <typename... Records>
struct RecordList {
  static std::string tablesDdl() { return (createTableSql<Records>() + ...); }
  static std::string migrationsFrom(std::int32_t version) { return (migrationSql<Records>(version) + ...); }
  static const AddedColumn* added(std::string_view table, std::string_view column) {
    const AddedColumn* found = nullptr;
    ((found = found ? found : SqlTable<Records>::name == table ? addedColumn<Records>(column) : nullptr), ...);
    return found;
  }
};
using SessionRecords = RecordList<RunRecord, PromptRecord, StepRecord, TreeRecord, StatisticRecord, TensorInfo,
                                  TokenString, Annotation>;

constexpr std::array kTables = {"meta",       "runs",    "prompts",      "steps",         "trees",
                                "statistics", "tensors", "tensor_tiles", "token_strings", "annotations"};

}  // namespace

void createSchema(Database& db) {
  Transaction txn(db, "schema");
  db.exec(SessionRecords::tablesDdl() + kOtherDdl, "schema");
  db.exec("PRAGMA application_id=" + std::to_string(kApplicationId), "schema");
  db.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion), "schema");
  txn.commit();
}

std::int32_t checkSchema(Database& db) {
  const ErrorContext where{.file = db.path(), .item = "schema"};
  const auto appId = db.queryInt("PRAGMA application_id", "schema");
  if (appId != kApplicationId)
    throw FormatError("not a DFlash Inspector session (application_id " + std::to_string(appId) + ")", where);
  const auto version = db.queryInt("PRAGMA user_version", "schema");
  if (version > kSchemaVersion)
    throw FormatError("written by a newer DFlash Inspector (schema version " + std::to_string(version) +
                          "; this build reads up to " + std::to_string(kSchemaVersion) + ")",
                      where);
  if (version < 1)
    throw FormatError("session schema version " + std::to_string(version) + " is invalid", where);
  Statement present(db, "SELECT count(*) FROM sqlite_schema WHERE type='table' AND name=?1", "schema");
  for (const char* table : kTables) {
    auto guard = present.use();
    present.bind(1, std::string_view(table));
    if (!present.step() || present.integer(0) != 1)
      throw FormatError("session has no table '" + std::string(table) + "'", {.file = db.path(), .item = table});
  }
  return static_cast<std::int32_t>(version);
}

void migrateSchema(Database& db, std::int32_t fromVersion) {
  if (fromVersion >= kSchemaVersion) return;
  Transaction txn(db, "schema migration");
  db.exec(SessionRecords::migrationsFrom(fromVersion), "schema migration");
  db.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion), "schema migration");
  txn.commit();
}

std::optional<std::string> olderColumnValue(std::string_view table, std::string_view column) {
  if (const AddedColumn* added = SessionRecords::added(table, column)) return std::string(added->olderValue);
  return std::nullopt;
}

}  // namespace dfi::session::detail
