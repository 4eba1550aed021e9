#include "schema.h"

#include <array>
#include <string>

#include "dfi/base/error.h"
#include "dfi/session/file_identity.h"

namespace dfi::session::detail {
namespace {

// Arrays are little-endian BLOBs (blob_codec.h); enums are the integers of records.h.
constexpr const char* kDdl = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs(
  run_id INTEGER PRIMARY KEY, name TEXT NOT NULL,
  target_path TEXT NOT NULL, target_config_json TEXT NOT NULL, target_weights_sha256 TEXT NOT NULL,
  drafter_path TEXT NOT NULL, drafter_config_json TEXT NOT NULL, drafter_weights_sha256 TEXT NOT NULL,
  engine_version TEXT NOT NULL, device TEXT NOT NULL, dtype TEXT NOT NULL,
  block_size INTEGER NOT NULL, top_k INTEGER NOT NULL, settings_json TEXT NOT NULL,
  shard TEXT NOT NULL, started_at REAL NOT NULL, finished_at REAL NOT NULL,
  timings_json TEXT NOT NULL);
CREATE TABLE prompts(
  run_id INTEGER NOT NULL, prompt_id INTEGER NOT NULL, dataset TEXT NOT NULL,
  turn INTEGER NOT NULL, text TEXT NOT NULL, prompt_tokens BLOB NOT NULL,
  completion_tokens INTEGER NOT NULL, PRIMARY KEY(run_id, prompt_id));
CREATE TABLE steps(
  step_id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, prompt_id INTEGER NOT NULL,
  step_index INTEGER NOT NULL, mode INTEGER NOT NULL, anchor_position INTEGER NOT NULL,
  anchor_token INTEGER NOT NULL, draft_tokens BLOB NOT NULL, target_tokens BLOB NOT NULL,
  accepted_count INTEGER NOT NULL, bonus_token INTEGER NOT NULL, topk_ids BLOB NOT NULL,
  topk_probs BLOB NOT NULL, garble_flags BLOB NOT NULL, mask_variant TEXT NOT NULL);
CREATE UNIQUE INDEX steps_by_block ON steps(run_id, prompt_id, step_index);
CREATE TABLE trees(
  step_id INTEGER PRIMARY KEY, node_tokens BLOB NOT NULL, node_log_probs BLOB NOT NULL,
  parents BLOB NOT NULL, accepted_path BLOB NOT NULL);
CREATE TABLE statistics(
  statistic_id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, step_id INTEGER NOT NULL,
  name TEXT NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, values_f32 BLOB NOT NULL);
CREATE INDEX statistics_by_step ON statistics(step_id, run_id);
CREATE TABLE tensors(
  tensor_id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, step_id INTEGER NOT NULL,
  name TEXT NOT NULL, layer INTEGER NOT NULL, head INTEGER NOT NULL, dtype INTEGER NOT NULL,
  shape BLOB NOT NULL, layout TEXT NOT NULL, tile_bytes INTEGER NOT NULL,
  codec TEXT NOT NULL);
CREATE INDEX tensors_by_step ON tensors(step_id, run_id);
CREATE TABLE tensor_tiles(
  tensor_id INTEGER NOT NULL, tile_index INTEGER NOT NULL, raw_bytes INTEGER NOT NULL,
  data BLOB NOT NULL, PRIMARY KEY(tensor_id, tile_index));
CREATE TABLE token_strings(token_id INTEGER PRIMARY KEY, raw BLOB NOT NULL, display TEXT NOT NULL);
CREATE TABLE annotations(
  annotation_id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, step_id INTEGER NOT NULL,
  kind INTEGER NOT NULL, body TEXT NOT NULL, created_at REAL NOT NULL);
CREATE INDEX annotations_by_run ON annotations(run_id);
)sql";

constexpr std::array kTables = {"meta",       "runs",    "prompts",      "steps",         "trees",
                                "statistics", "tensors", "tensor_tiles", "token_strings", "annotations"};

}  // namespace

void createSchema(Database& db) {
  Transaction txn(db, "schema");
  db.exec(kDdl, "schema");
  db.exec("PRAGMA application_id=" + std::to_string(kApplicationId), "schema");
  db.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion), "schema");
  txn.commit();
}

void checkSchema(Database& db) {
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
  // Version 1 is the only one so far; a v2 build adds its migrations from older versions here.
  Statement present(db, "SELECT count(*) FROM sqlite_schema WHERE type='table' AND name=?1", "schema");
  for (const char* table : kTables) {
    auto guard = present.use();
    present.bind(1, std::string_view(table));
    if (!present.step() || present.integer(0) != 1)
      throw FormatError("session has no table '" + std::string(table) + "'", {.file = db.path(), .item = table});
  }
}

}  // namespace dfi::session::detail
