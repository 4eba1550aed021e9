#include "dfi/session/writer.h"

#include <optional>
#include <unordered_map>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "blob_codec.h"
#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/base/version.h"
#include "record_checks.h"
#include "schema.h"
#include "writer_setup.h"
#include "sqlite_handle.h"
#include "tile_codec.h"

namespace dfi::session {

using detail::Database;
using detail::encodeBlob;
using detail::Statement;

namespace {

std::int64_t maxId(Database& db, const char* table, const char* column) {
  return db.queryInt(std::string("SELECT coalesce(max(") + column + "), 0) FROM " + table, table);
}

}  // namespace

// Where a record sits in the stream: a batch may be committed before a block starts, never
// inside one.
enum class Boundary { StartsBlock, PartOfBlock };

struct Writer::Impl {
  std::string path;
  WriterOptions options;
  std::unique_ptr<Database> db;
  Statement insertRun, finishRun, insertPrompt, insertStep, insertTree, insertStatistic,
      insertTensor, insertTile, insertToken, selectToken, insertAnnotation;
  std::unordered_map<RunId, std::int32_t> topKByRun;  // to check each step's top-k table size
  RunId lastRun;
  StepId lastStep;
  StepId committedStep;
  TensorId lastTensor;
  AnnotationId lastAnnotation;
  int pending = 0;
  std::chrono::steady_clock::time_point batchStart;
  bool failed = false;
  bool closed = false;
  detail::TileCompressor compressor;
  std::vector<std::uint8_t> scratch[4];  // byte-swapped arrays, on big-endian hosts only

  Impl(const std::string& file, WriterOptions opts)
      : path(file),
        options(std::move(opts)),
        db(detail::openForWriting(path, options.mode)),
        insertRun(*db, "INSERT INTO runs VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18)", "runs"),
        finishRun(*db, "UPDATE runs SET finished_at=?2, timings_json=?3 WHERE run_id=?1", "runs"),
        insertPrompt(*db, "INSERT INTO prompts VALUES(?1,?2,?3,?4,?5,?6,?7)", "prompts"),
        insertStep(*db, "INSERT INTO steps VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)", "steps"),
        insertTree(*db, "INSERT INTO trees VALUES(?1,?2,?3,?4,?5)", "trees"),
        insertStatistic(*db, "INSERT INTO statistics VALUES(NULL,?1,?2,?3,?4,?5,?6)", "statistics"),
        insertTensor(*db, "INSERT INTO tensors VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,'zstd')", "tensors"),
        insertTile(*db, "INSERT INTO tensor_tiles VALUES(?1,?2,?3,?4)", "tensor_tiles"),
        insertToken(*db, "INSERT INTO token_strings VALUES(?1,?2,?3) ON CONFLICT(token_id) DO NOTHING", "token_strings"),
        selectToken(*db, "SELECT raw, display FROM token_strings WHERE token_id=?1", "token_strings"),
        insertAnnotation(*db, "INSERT INTO annotations VALUES(?1,?2,?3,?4,?5,?6)", "annotations"),
        lastRun(maxId(*db, "runs", "run_id")),
        lastStep(maxId(*db, "steps", "step_id")),
        committedStep(lastStep),
        lastTensor(maxId(*db, "tensors", "tensor_id")),
        lastAnnotation(maxId(*db, "annotations", "annotation_id")) {
    Statement runs(*db, "SELECT run_id, top_k FROM runs", "runs");
    while (runs.step()) topKByRun[runs.integer(0)] = static_cast<std::int32_t>(runs.integer(1));
    if (options.mode != OpenMode::Append) {
      Statement meta(*db, "INSERT INTO meta VALUES(?1,?2)", "meta");
      meta.bind(1, std::string_view("created_by"));
      const std::string creator = "dflash-inspector " + dfi::version() + " (git " + dfi::gitHash() + ")";
      meta.bind(2, std::string_view(creator));
      meta.run();
    }
  }

  ErrorContext where(const std::string& item) const { return {.file = path, .item = item}; }

  // Runs one record's inserts inside the current batch. A due batch is committed only before a
  // record that starts a new block (a step, prompt or run), so a step and the tree, statistics
  // and tensors that follow it always become visible together. A rejected record
  // (ValidationError) leaves the batch intact; any other failure rolls the batch back and ends
  // the writer.
  template <typename Insert>
  void record(Boundary boundary, Insert&& insert) {
    if (closed) throw UsageError("session writer is closed", where(""));
    if (failed) throw IoError("session writer stopped after an earlier error", where(""));
    if (boundary == Boundary::StartsBlock && batchDue()) commit();
    try {
      if (!db->inTransaction()) {
        db->exec("BEGIN IMMEDIATE", "transaction");
        batchStart = std::chrono::steady_clock::now();
      }
      insert();
    } catch (const ValidationError&) {
      throw;
    } catch (...) {
      abandon();
      throw;
    }
    ++pending;
  }

  bool batchDue() const {
    return db->inTransaction() &&
           (pending >= options.batchRecords || std::chrono::steady_clock::now() - batchStart >= options.batchInterval);
  }

  void commit() {
    if (!db->inTransaction()) return;
    try {
      db->exec("COMMIT", "transaction");
    } catch (...) {
      abandon();
      throw;
    }
    pending = 0;
    committedStep = lastStep;
    if (options.onCommit) options.onCommit(committedStep);
  }

  void abandon() {
    failed = true;
    if (db->inTransaction()) sqlite3_exec(db->get(), "ROLLBACK", nullptr, nullptr, nullptr);
    lastStep = committedStep;
  }

  void checkJson(const std::string& text, const std::string& field) const {
    if (!text.empty() && !nlohmann::json::accept(text))
      throw ValidationError("not valid JSON", where("runs." + field));
  }

  // A reader following the file can keep it busy; that is not an error, only a deferral.
  bool execUnlessBusy(const char* sql) {
    const int rc = sqlite3_exec(db->get(), sql, nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return true;
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) return false;
    db->fail(rc, "checkpoint");
  }

  void close() {
    if (closed) return;
    closed = true;
    auto log = logger("session");
    if (failed) {
      // Leave the WAL as it is: its committed frames are valid, and checkpointing them could
      // hit the same full disk. The next open recovers them.
      db.reset();
      return;
    }
    try {
      commit();
      if (!execUnlessBusy("PRAGMA wal_checkpoint(TRUNCATE)") || !execUnlessBusy("PRAGMA journal_mode=DELETE"))
        log->warn("{}: left in WAL mode because another process (a follower) has it open; the file is valid",
                  path);
    } catch (...) {
      db.reset();
      throw;
    }
    db.reset();
  }
};

Writer::Writer(const std::string& path, WriterOptions options)
    : impl_(std::make_unique<Impl>(path, std::move(options))) {}

Writer::~Writer() {
  try {
    close();
  } catch (const std::exception& e) {
    logger("session")->error("closing {} failed: {}", impl_->path, e.what());
  }
}

RunId Writer::addRun(const RunRecord& run) {
  for (const auto& [text, field] : {std::pair{&run.target.configJson, "target_config_json"},
                                    {&run.drafter.configJson, "drafter_config_json"},
                                    {&run.settingsJson, "settings_json"},
                                    {&run.timingsJson, "timings_json"}})
    impl_->checkJson(*text, field);
  if (run.topK < 0 || run.blockSize < 0) throw ValidationError("negative top_k or block_size", impl_->where("runs"));
  const RunId id = impl_->lastRun + 1;
  impl_->record(Boundary::StartsBlock, [&] {
    Statement& st = impl_->insertRun;
    auto guard = st.use();
    st.bind(1, id);
    st.bind(2, std::string_view(run.name));
    int column = 3;
    for (const ModelIdentity* model : {&run.target, &run.drafter}) {
      st.bind(column++, std::string_view(model->path));
      st.bind(column++, std::string_view(model->configJson));
      st.bind(column++, std::string_view(model->weightsSha256));
    }
    st.bind(9, std::string_view(run.engineVersion));
    st.bind(10, std::string_view(run.device));
    st.bind(11, std::string_view(run.dtype));
    st.bind(12, std::int64_t{run.blockSize});
    st.bind(13, std::int64_t{run.topK});
    st.bind(14, std::string_view(run.settingsJson));
    st.bind(15, std::string_view(run.shard));
    st.bind(16, run.startedAt);
    st.bind(17, run.finishedAt);
    st.bind(18, std::string_view(run.timingsJson));
    st.step();
  });
  impl_->lastRun = id;
  impl_->topKByRun[id] = run.topK;
  return id;
}

void Writer::finishRun(RunId run, double finishedAt, const std::string& timingsJson) {
  impl_->checkJson(timingsJson, "timings_json");
  impl_->record(Boundary::StartsBlock, [&] {
    Statement& st = impl_->finishRun;
    auto guard = st.use();
    st.bind(1, run);
    st.bind(2, finishedAt);
    st.bind(3, std::string_view(timingsJson));
    st.step();
  });
}

void Writer::addPrompt(const PromptRecord& prompt) {
  impl_->record(Boundary::StartsBlock, [&] {
    Statement& st = impl_->insertPrompt;
    auto guard = st.use();
    st.bind(1, prompt.runId);
    st.bind(2, prompt.promptId);
    st.bind(3, std::string_view(prompt.dataset));
    st.bind(4, std::int64_t{prompt.turn});
    st.bind(5, std::string_view(prompt.text));
    st.bindBlob(6, encodeBlob<TokenId>(prompt.promptTokens, impl_->scratch[0]));
    st.bind(7, std::int64_t{prompt.completionTokens});
    st.step();
  });
}

StepId Writer::addStep(const StepRecord& step) {
  const auto run = impl_->topKByRun.find(step.runId);
  if (run == impl_->topKByRun.end())
    throw ValidationError("step refers to run " + std::to_string(step.runId) + ", which is not in the session",
                          impl_->where("steps.run_id"));
  if (auto problem = detail::stepProblem(step, run->second))
    throw ValidationError(*problem, impl_->where("steps"));
  const StepId id = impl_->lastStep + 1;
  impl_->record(Boundary::StartsBlock, [&] {
    Statement& st = impl_->insertStep;
    auto& scratch = impl_->scratch;
    auto guard = st.use();
    st.bind(1, id);
    st.bind(2, step.runId);
    st.bind(3, step.promptId);
    st.bind(4, std::int64_t{step.stepIndex});
    st.bind(5, std::int64_t{static_cast<std::int32_t>(step.mode)});
    st.bind(6, step.anchorPosition);
    st.bind(7, std::int64_t{step.anchorToken});
    st.bindBlob(8, encodeBlob<TokenId>(step.draftTokens, scratch[0]));
    st.bindBlob(9, encodeBlob<TokenId>(step.targetTokens, scratch[1]));
    st.bind(10, std::int64_t{step.acceptedCount});
    st.bind(11, std::int64_t{step.bonusToken});
    st.bindBlob(12, encodeBlob<TokenId>(step.topKIds, scratch[2]));
    st.bindBlob(13, encodeBlob<float>(step.topKProbs, scratch[3]));
    st.bindBlob(14, step.garbleFlags);
    st.bind(15, std::string_view(step.maskVariant));
    st.step();
    impl_->lastStep = id;
  });
  return id;
}

void Writer::addTree(const TreeRecord& tree) {
  if (auto problem = detail::treeProblem(tree)) throw ValidationError(*problem, impl_->where("trees"));
  impl_->record(Boundary::PartOfBlock, [&] {
    Statement& st = impl_->insertTree;
    auto& scratch = impl_->scratch;
    auto guard = st.use();
    st.bind(1, tree.stepId);
    st.bindBlob(2, encodeBlob<TokenId>(tree.nodeTokens, scratch[0]));
    st.bindBlob(3, encodeBlob<float>(tree.nodeLogProbs, scratch[1]));
    st.bindBlob(4, encodeBlob<std::int32_t>(tree.parents, scratch[2]));
    st.bindBlob(5, encodeBlob<std::int32_t>(tree.acceptedPath, scratch[3]));
    st.step();
  });
}

void Writer::addStatistic(const StatisticRecord& statistic) {
  impl_->record(Boundary::PartOfBlock, [&] {
    Statement& st = impl_->insertStatistic;
    auto guard = st.use();
    st.bind(1, statistic.runId);
    st.bind(2, statistic.stepId);
    st.bind(3, std::string_view(statistic.name));
    st.bind(4, std::int64_t{statistic.layer});
    st.bind(5, std::int64_t{statistic.head});
    st.bindBlob(6, encodeBlob<float>(statistic.values, impl_->scratch[0]));
    st.step();
  });
}

TensorId Writer::addTensor(const TensorRecord& tensor) {
  const TensorInfo& info = tensor.info;
  detail::TileLayout tiles;
  if (auto problem = detail::tileLayoutProblem(info, /*chooseTileSize=*/true, tiles))
    throw ValidationError(*problem, impl_->where("tensors"));
  if (tensor.data.size() != tiles.totalBytes)
    throw ValidationError("tensor '" + info.name + "' has " + std::to_string(tensor.data.size()) +
                              " bytes of data, its shape and dtype need " + std::to_string(tiles.totalBytes),
                          impl_->where("tensors"));
  const TensorId id = impl_->lastTensor + 1;
  impl_->record(Boundary::PartOfBlock, [&] {
    Statement& st = impl_->insertTensor;
    {
      auto guard = st.use();
      st.bind(1, id);
      st.bind(2, info.runId);
      st.bind(3, info.stepId);
      st.bind(4, std::string_view(info.name));
      st.bind(5, std::int64_t{info.layer});
      st.bind(6, std::int64_t{info.head});
      st.bind(7, std::int64_t{static_cast<std::int32_t>(info.dtype)});
      st.bindBlob(8, encodeBlob<std::int64_t>(info.shape, impl_->scratch[0]));
      st.bind(9, std::string_view(info.layout));
      st.bind(10, static_cast<std::int64_t>(tiles.tileBytes));
      st.step();
    }
    Statement& tile = impl_->insertTile;
    for (std::uint64_t t = 0; t < tiles.tileCount; ++t) {
      const auto raw = std::span<const std::uint8_t>(tensor.data).subspan(t * tiles.tileBytes, tiles.tileSize(t));
      auto guard = tile.use();
      tile.bind(1, id);
      tile.bind(2, static_cast<std::int64_t>(t));
      tile.bind(3, static_cast<std::int64_t>(raw.size()));
      tile.bindBlob(4, impl_->compressor.compress(raw));
      tile.step();
    }
  });
  impl_->lastTensor = id;
  return id;
}

void Writer::addTokenStrings(std::span<const TokenString> strings) {
  impl_->record(Boundary::PartOfBlock, [&] {
    Statement& insert = impl_->insertToken;
    Statement& select = impl_->selectToken;
    for (const TokenString& token : strings) {
      auto guard = insert.use();
      insert.bind(1, std::int64_t{token.tokenId});
      insert.bindBlob(2, {reinterpret_cast<const std::uint8_t*>(token.raw.data()), token.raw.size()});
      insert.bind(3, std::string_view(token.display));
      insert.step();
      if (sqlite3_changes(impl_->db->get()) == 1) continue;
      auto selectGuard = select.use();
      select.bind(1, std::int64_t{token.tokenId});
      const bool found = select.step();
      const auto stored = found ? select.blob(0) : std::span<const std::uint8_t>();
      if (!found ||
          std::string_view(reinterpret_cast<const char*>(stored.data()), stored.size()) != token.raw ||
          select.text(1) != token.display)
        throw ValidationError("token " + std::to_string(token.tokenId) + " is already stored with another string",
                              impl_->where("token_strings"));
    }
  });
}

AnnotationId Writer::addAnnotation(const Annotation& annotation) {
  const AnnotationId id = impl_->lastAnnotation + 1;
  impl_->record(Boundary::PartOfBlock, [&] {
    Statement& st = impl_->insertAnnotation;
    auto guard = st.use();
    st.bind(1, id);
    st.bind(2, annotation.runId);
    st.bind(3, annotation.stepId);
    st.bind(4, std::int64_t{static_cast<std::int32_t>(annotation.kind)});
    st.bind(5, std::string_view(annotation.body));
    st.bind(6, annotation.createdAt);
    st.step();
  });
  impl_->lastAnnotation = id;
  return id;
}

void Writer::flush() {
  if (impl_->failed || impl_->closed) return;
  impl_->commit();
}

void Writer::close() { impl_->close(); }

StepId Writer::lastCommittedStep() const { return impl_->committedStep; }

const std::string& Writer::path() const { return impl_->path; }

}  // namespace dfi::session
