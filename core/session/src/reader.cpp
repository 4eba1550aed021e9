#include "dfi/session/reader.h"

#include <algorithm>

#include <sqlite3.h>

#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/session/file_identity.h"
#include "record_checks.h"
#include "row_decode.h"
#include "schema.h"
#include "sql_table.h"
#include "sqlite_handle.h"
#include "tile_codec.h"

namespace dfi::session {

using namespace detail;

namespace {

// A writer killed mid-transaction leaves a hot rollback journal (or a WAL without its index)
// that only a read-write connection may roll back. SQLite does that on the first read of any
// read-write connection; we let it, once, rather than refuse to show a crashed recording.
bool needsRecovery(Database& db) {
  const int rc = sqlite3_exec(db.get(), "SELECT count(*) FROM sqlite_schema", nullptr, nullptr, nullptr);
  return (rc & 0xff) == SQLITE_READONLY;
}

std::unique_ptr<Database> openForReading(const std::string& path) {
  switch (sniffFile(path)) {
    case FileKind::Unreadable: throw IoError("cannot read session file", {.file = path});
    case FileKind::NotSqlite: throw FormatError("not a session file (no SQLite header)", {.file = path});
    case FileKind::OtherSqliteDatabase:
      throw FormatError("an SQLite database, but not a DFlash Inspector session", {.file = path});
    case FileKind::Session: break;
  }
  auto db = std::make_unique<Database>(path, SQLITE_OPEN_READONLY);
  if (needsRecovery(*db)) {
    logger("session")->info("{}: rolling back a write that was interrupted", path);
    db.reset();
    Database(path, SQLITE_OPEN_READWRITE).exec("SELECT count(*) FROM sqlite_schema", "recovery");
    db = std::make_unique<Database>(path, SQLITE_OPEN_READONLY);
  }
  sqlite3_busy_timeout(db->get(), 2000);
  // A bounded page cache keeps memory proportional to what is viewed, whatever the file size;
  // cell_size_check turns more kinds of damage into SQLITE_CORRUPT early.
  db->exec("PRAGMA cache_size=-8192; PRAGMA cell_size_check=ON", "schema");
  return db;
}

}  // namespace

struct Reader::Impl {
  std::unique_ptr<Database> db;
  const std::string& file;
  Statement dataVersion, allRuns, oneRun, countSteps, promptsOfRun, oneStep, stepsOfPrompt, stepsAfter,
      maxStep, stepsOfRun, stepSummariesOfRun, oneTree, statisticsOfStep, tensorsOfStep, oneTensor, tilesOfTensor, oneToken,
      someTokens, annotationsOfRun;
  std::int64_t lastDataVersion = 0;

  explicit Impl(const std::string& path) : Impl(openForReading(path)) {}
  explicit Impl(std::unique_ptr<Database>&& opened) : Impl(std::move(opened), checkSchema(*opened)) {}

  // `version` is the file's schema version: columns added since read as their older value.
  Impl(std::unique_ptr<Database>&& opened, std::int32_t version)
      : db(std::move(opened)),
        file(db->path()),
        dataVersion(*db, "PRAGMA data_version", "schema"),
        allRuns(*db, selectSql<RunRecord>(version, "ORDER BY run_id"), "runs"),
        oneRun(*db, selectSql<RunRecord>(version, "WHERE run_id=?1"), "runs"),
        countSteps(*db, "SELECT count(*) FROM steps WHERE run_id=?1", "steps"),
        promptsOfRun(*db, selectSql<PromptRecord>(version, "WHERE run_id=?1 ORDER BY prompt_id"), "prompts"),
        oneStep(*db, selectSql<StepRecord>(version, "WHERE step_id=?1"), "steps"),
        stepsOfPrompt(*db,
                      selectSql<StepRecord>(version,
                                            "WHERE run_id=?1 AND prompt_id=?2 AND step_index>=?3 "
                                            "ORDER BY step_index LIMIT ?4"),
                      "steps"),
        stepsAfter(*db, selectSql<StepRecord>(version, "WHERE step_id>?1 ORDER BY step_id LIMIT ?2"), "steps"),
        maxStep(*db, "SELECT coalesce(max(step_id), 0) FROM steps", "steps"),
        stepsOfRun(*db, selectSql<StepRecord>(version, "WHERE run_id=?1 ORDER BY step_id"), "steps"),
        // Block order: the steps_by_block index gives it without sorting the run.
        stepSummariesOfRun(*db, stepSummarySql(version, "WHERE run_id=?1 ORDER BY prompt_id, step_index"), "steps"),
        oneTree(*db, selectSql<TreeRecord>(version, "WHERE step_id=?1"), "trees"),
        statisticsOfStep(*db, selectSql<StatisticRecord>(version, "WHERE step_id=?2 AND run_id=?1"),
                         "statistics"),
        tensorsOfStep(*db, selectSql<TensorInfo>(version, "WHERE step_id=?2 AND run_id=?1 ORDER BY tensor_id"),
                      "tensors"),
        oneTensor(*db, selectSql<TensorInfo>(version, "WHERE tensor_id=?1"), "tensors"),
        tilesOfTensor(*db,
                      "SELECT tile_index, raw_bytes, data FROM tensor_tiles WHERE tensor_id=?1 AND "
                      "tile_index BETWEEN ?2 AND ?3 ORDER BY tile_index",
                      "tensor_tiles"),
        oneToken(*db, selectSql<TokenString>(version, "WHERE token_id=?1"), "token_strings"),
        // The ids as one JSON array: one query (one read lock) however many tokens a view asks.
        someTokens(*db, selectSql<TokenString>(version, "WHERE token_id IN (SELECT value FROM json_each(?1))"),
                   "token_strings"),
        annotationsOfRun(*db, selectSql<Annotation>(version, "WHERE run_id=?1 ORDER BY annotation_id"),
                         "annotations") {
    lastDataVersion = currentDataVersion();
  }

  std::int64_t currentDataVersion() {
    auto guard = dataVersion.use();
    dataVersion.step();
    return dataVersion.integer(0);
  }

  template <typename Decode>
  auto collect(Statement& st, Decode decode) {
    std::vector<decltype(decode(st))> out;
    while (st.step()) out.push_back(decode(st));
    return out;
  }

  TensorInfo tensorInfo(TensorId id) {
    auto guard = oneTensor.use();
    oneTensor.bind(1, id);
    if (!oneTensor.step())
      throw FormatError("no tensor " + std::to_string(id), {.file = file, .item = "tensors"});
    return decodeRecord<TensorInfo>(oneTensor, file);
  }

  // Decompresses tiles [first, last] of a tensor, checking each is present and of its size.
  std::vector<std::uint8_t> tiles(const TensorInfo& info, const TileLayout& layout, std::uint64_t first,
                                  std::uint64_t last) {
    std::vector<std::uint8_t> out;
    const ErrorContext where{.file = file, .item = "tensor_tiles (tensor " + std::to_string(info.tensorId) + ")"};
    auto guard = tilesOfTensor.use();
    tilesOfTensor.bind(1, info.tensorId);
    tilesOfTensor.bind(2, static_cast<std::int64_t>(first));
    tilesOfTensor.bind(3, static_cast<std::int64_t>(last));
    std::uint64_t expected = first;
    while (tilesOfTensor.step()) {
      const auto index = static_cast<std::uint64_t>(tilesOfTensor.integer(0));
      if (index != expected) break;
      if (static_cast<std::uint64_t>(tilesOfTensor.integer(1)) != layout.tileSize(index))
        throw FormatError("tile " + std::to_string(index) + " has the wrong size", where);
      decompressTile(tilesOfTensor.blob(2), layout.tileSize(index), out, where);
      ++expected;
    }
    if (expected != last + 1) throw FormatError("tile " + std::to_string(expected) + " is missing", where);
    return out;
  }
};

Reader::Reader(const std::string& path) : impl_(std::make_unique<Impl>(path)) {}
Reader::~Reader() = default;

const std::string& Reader::path() const { return impl_->file; }

bool Reader::refresh() {
  const std::int64_t now = impl_->currentDataVersion();
  const bool changed = now != impl_->lastDataVersion;
  impl_->lastDataVersion = now;
  return changed;
}

std::vector<RunRecord> Reader::runs() {
  auto guard = impl_->allRuns.use();
  return impl_->collect(impl_->allRuns, [&](const Statement& row) { return decodeRecord<RunRecord>(row, impl_->file); });
}

std::optional<RunRecord> Reader::run(RunId id) {
  auto guard = impl_->oneRun.use();
  impl_->oneRun.bind(1, id);
  if (!impl_->oneRun.step()) return std::nullopt;
  return decodeRecord<RunRecord>(impl_->oneRun, impl_->file);
}

std::int64_t Reader::stepCount(RunId run) {
  auto guard = impl_->countSteps.use();
  impl_->countSteps.bind(1, run);
  impl_->countSteps.step();
  return impl_->countSteps.integer(0);
}

std::vector<PromptRecord> Reader::prompts(RunId run) {
  auto& st = impl_->promptsOfRun;
  auto guard = st.use();
  st.bind(1, run);
  return impl_->collect(st, [&](const Statement& row) { return decodeRecord<PromptRecord>(row, impl_->file); });
}

std::optional<StepRecord> Reader::step(StepId id) {
  auto& st = impl_->oneStep;
  auto guard = st.use();
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  return decodeRecord<StepRecord>(st, impl_->file);
}

std::vector<StepRecord> Reader::steps(RunId run, PromptId prompt, std::int32_t firstIndex, std::int32_t count) {
  auto& st = impl_->stepsOfPrompt;
  auto guard = st.use();
  st.bind(1, run);
  st.bind(2, prompt);
  st.bind(3, std::int64_t{firstIndex});
  st.bind(4, std::int64_t{count});
  return impl_->collect(st, [&](const Statement& row) { return decodeRecord<StepRecord>(row, impl_->file); });
}

std::vector<StepRecord> Reader::stepsSince(StepId lastSeen, std::int32_t limit) {
  auto& st = impl_->stepsAfter;
  auto guard = st.use();
  st.bind(1, lastSeen);
  st.bind(2, std::int64_t{limit});
  return impl_->collect(st, [&](const Statement& row) { return decodeRecord<StepRecord>(row, impl_->file); });
}

StepId Reader::lastStepId() {
  auto guard = impl_->maxStep.use();
  impl_->maxStep.step();
  return impl_->maxStep.integer(0);
}

void Reader::forEachStep(RunId run, const std::function<void(const StepRecord&)>& visit) {
  auto& st = impl_->stepsOfRun;
  auto guard = st.use();
  st.bind(1, run);
  while (st.step()) visit(decodeRecord<StepRecord>(st, impl_->file));
}

void Reader::forEachStepSummary(RunId run, const std::function<void(const StepSummary&)>& visit) {
  auto& st = impl_->stepSummariesOfRun;
  auto guard = st.use();
  st.bind(1, run);
  while (st.step()) visit(decodeStepSummary(st, impl_->file));
}

std::optional<TreeRecord> Reader::tree(StepId step) {
  auto& st = impl_->oneTree;
  auto guard = st.use();
  st.bind(1, step);
  if (!st.step()) return std::nullopt;
  return decodeRecord<TreeRecord>(st, impl_->file);
}

std::vector<StatisticRecord> Reader::statistics(RunId run, StepId step) {
  auto& st = impl_->statisticsOfStep;
  auto guard = st.use();
  st.bind(1, run);
  st.bind(2, step);
  return impl_->collect(st, [&](const Statement& row) { return decodeRecord<StatisticRecord>(row, impl_->file); });
}

std::vector<TensorInfo> Reader::tensors(RunId run, StepId step) {
  auto& st = impl_->tensorsOfStep;
  auto guard = st.use();
  st.bind(1, run);
  st.bind(2, step);
  return impl_->collect(st, [&](const Statement& row) { return decodeRecord<TensorInfo>(row, impl_->file); });
}

BlockRecords Reader::block(StepId id) {
  auto found = step(id);
  if (!found) throw FormatError("no step " + std::to_string(id), {.file = impl_->file, .item = "steps"});
  BlockRecords block{.step = std::move(*found)};
  block.tree = tree(id);
  block.statistics = statistics(block.step.runId, id);
  block.tensors = tensors(block.step.runId, id);
  return block;
}

TensorRecord Reader::readTensor(TensorId id) {
  TensorRecord tensor{.info = impl_->tensorInfo(id)};
  TileLayout layout;
  tileLayoutProblem(tensor.info, false, layout);  // decodeTensorInfo already checked it
  if (layout.tileCount > 0) tensor.data = impl_->tiles(tensor.info, layout, 0, layout.tileCount - 1);
  return tensor;
}

std::vector<std::uint8_t> Reader::readTensorRows(TensorId id, std::int64_t firstRow, std::int64_t lastRow) {
  const TensorInfo info = impl_->tensorInfo(id);
  TileLayout layout;
  tileLayoutProblem(info, false, layout);
  const std::int64_t rows = info.shape.empty() ? 1 : info.shape.front();
  if (firstRow < 0 || lastRow > rows || firstRow > lastRow)
    throw UsageError("rows [" + std::to_string(firstRow) + ", " + std::to_string(lastRow) + ") are outside 0.." +
                         std::to_string(rows),
                     {.file = impl_->file, .item = "tensors." + info.name});
  if (firstRow == lastRow) return {};
  const std::uint64_t rowBytes = layout.totalBytes / static_cast<std::uint64_t>(rows);
  const std::uint64_t begin = static_cast<std::uint64_t>(firstRow) * rowBytes;
  const std::uint64_t end = static_cast<std::uint64_t>(lastRow) * rowBytes;
  if (begin == end) return {};
  const std::uint64_t firstTile = begin / layout.tileBytes;
  std::vector<std::uint8_t> bytes = impl_->tiles(info, layout, firstTile, (end - 1) / layout.tileBytes);
  const std::uint64_t skip = begin - firstTile * layout.tileBytes;
  return {bytes.begin() + static_cast<std::ptrdiff_t>(skip), bytes.begin() + static_cast<std::ptrdiff_t>(skip + end - begin)};
}

std::optional<TokenString> Reader::tokenString(TokenId id) {
  auto& st = impl_->oneToken;
  auto guard = st.use();
  st.bind(1, std::int64_t{id});
  if (!st.step()) return std::nullopt;
  return decodeRecord<TokenString>(st, impl_->file);
}

std::vector<TokenString> Reader::tokenStrings(std::span<const TokenId> ids) {
  std::string list = "[";
  for (const TokenId id : ids) list += std::to_string(id) + ',';
  if (!ids.empty()) list.pop_back();
  list += ']';
  auto& st = impl_->someTokens;
  auto guard = st.use();
  st.bind(1, std::string_view(list));
  return impl_->collect(st, [&](const Statement& row) { return decodeRecord<TokenString>(row, impl_->file); });
}

std::vector<Annotation> Reader::annotations(RunId run) {
  auto& st = impl_->annotationsOfRun;
  auto guard = st.use();
  st.bind(1, run);
  return impl_->collect(st, [&](const Statement& row) { return decodeRecord<Annotation>(row, impl_->file); });
}

}  // namespace dfi::session
