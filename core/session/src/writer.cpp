#include "dfi/session/writer.h"

#include <optional>
#include <unordered_map>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "dfi/base/error.h"
#include "dfi/base/log.h"
#include "dfi/base/version.h"
#include "record_checks.h"
#include "sql_table.h"
#include "sqlite_handle.h"
#include "tile_codec.h"
#include "writer_setup.h"

namespace dfi::session {

using detail::Database;
using detail::insertSql;
using detail::Statement;

namespace {

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
  IdShift existing;  // the ids the file held at open
  int pending = 0;
  std::chrono::steady_clock::time_point batchStart;
  bool failed = false;
  bool closed = false;
  detail::TileCompressor compressor;
  detail::RowScratch scratch;  // byte-swapped arrays, on big-endian hosts only

  Impl(const std::string& file, WriterOptions opts)
      : path(file),
        options(std::move(opts)),
        db(detail::openForWriting(path, options.mode)),
        insertRun(*db, insertSql<RunRecord>(), "runs"),
        finishRun(*db, "UPDATE runs SET finished_at=?2, timings_json=?3 WHERE run_id=?1", "runs"),
        insertPrompt(*db, insertSql<PromptRecord>(), "prompts"),
        insertStep(*db, insertSql<StepRecord>(), "steps"),
        insertTree(*db, insertSql<TreeRecord>(), "trees"),
        insertStatistic(*db, insertSql<StatisticRecord>(), "statistics"),
        insertTensor(*db, insertSql<TensorInfo>(), "tensors"),
        insertTile(*db, "INSERT INTO tensor_tiles VALUES(?1,?2,?3,?4)", "tensor_tiles"),
        insertToken(*db, insertSql<TokenString>("ON CONFLICT(token_id) DO NOTHING"), "token_strings"),
        selectToken(*db, "SELECT raw, display FROM token_strings WHERE token_id=?1", "token_strings"),
        insertAnnotation(*db, insertSql<Annotation>(), "annotations"),
        lastRun(detail::maxId<RunRecord>(*db)),
        lastStep(detail::maxId<StepRecord>(*db)),
        committedStep(lastStep),
        lastTensor(detail::maxId<TensorInfo>(*db)),
        lastAnnotation(detail::maxId<Annotation>(*db)),
        existing{.runs = lastRun, .steps = lastStep, .tensors = lastTensor} {
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

  // The id a new record gets: the next one, or with keepIds the one it carries.
  template <typename R>
  std::int64_t nextId(std::int64_t carried, std::int64_t last) const {
    if (!options.keepIds) return last + 1;
    if (carried <= last)
      throw ValidationError("id " + std::to_string(carried) + " is not above the last one written (" +
                                std::to_string(last) + ")",
                            where(std::string(detail::SqlTable<R>::name) + "." + std::string(detail::integerKeyOf<R>())));
    return carried;
  }

  // Binds and inserts `record`; `key`, when given, is the id the writer gives it, bound over the
  // record's own so that a step is not copied to change one integer.
  template <typename R>
  void bindAndStep(Statement& st, const R& record, std::optional<std::int64_t> key = std::nullopt) {
    auto guard = st.use();
    detail::bindFields(st, record, scratch);
    if (key) st.bind(detail::keyParameter<R>(), *key);
    st.step();
  }

  // One record's row, inside the current batch; `then` runs once the row is in.
  template <typename R, typename Then = void (*)()>
  void insert(Boundary boundary, Statement& st, const R& record, std::optional<std::int64_t> key = std::nullopt,
              Then then = [] {}) {
    this->record(boundary, [&] {
      bindAndStep(st, record, key);
      then();
    });
  }

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
      throw ValidationError("not valid JSON", where(field));
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
        // The usual case is the GUI following the session it writes: nothing is wrong, so no
        // warning (it showed in the GUI's log after every run from the Run dialog).
        log->info("{}: kept in WAL mode while a reader (a follower, such as the GUI) has it open; the file is "
                  "complete and valid",
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
  forEachField<RunRecord>([&](const auto& f) {
    if constexpr (std::is_same_v<FieldValue<std::decay_t<decltype(f)>, RunRecord>, std::string>)
      if (f.traits.jsonText) impl_->checkJson(f.get(run), "runs." + std::string(f.name));
  });
  if (run.topK < 0 || run.blockSize < 0 || run.slidingWindow < 0)
    throw ValidationError("negative top_k, block_size or sliding_window", impl_->where("runs"));
  const RunId id = impl_->nextId<RunRecord>(run.runId, impl_->lastRun);
  impl_->insert(Boundary::StartsBlock, impl_->insertRun, run, id);
  impl_->lastRun = id;
  impl_->topKByRun[id] = run.topK;
  return id;
}

void Writer::finishRun(RunId run, double finishedAt, const std::string& timingsJson) {
  impl_->checkJson(timingsJson, "runs." + std::string(fieldName(&RunRecord::timingsJson)));
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
  impl_->insert(Boundary::StartsBlock, impl_->insertPrompt, prompt);
}

StepId Writer::addStep(const StepRecord& step) {
  const auto run = impl_->topKByRun.find(step.runId);
  if (run == impl_->topKByRun.end())
    throw ValidationError("step refers to run " + std::to_string(step.runId) + ", which is not in the session",
                          impl_->where("steps." + std::string(fieldName(&StepRecord::runId))));
  if (auto problem = detail::stepProblem(step, run->second))
    throw ValidationError(*problem, impl_->where("steps"));
  const StepId id = impl_->nextId<StepRecord>(step.stepId, impl_->lastStep);
  impl_->insert(Boundary::StartsBlock, impl_->insertStep, step, id, [&] { impl_->lastStep = id; });
  return id;
}

void Writer::addTree(const TreeRecord& tree) {
  if (auto problem = detail::treeProblem(tree)) throw ValidationError(*problem, impl_->where("trees"));
  impl_->insert(Boundary::PartOfBlock, impl_->insertTree, tree);
}

void Writer::addStatistic(const StatisticRecord& statistic) {
  impl_->insert(Boundary::PartOfBlock, impl_->insertStatistic, statistic);
}

TensorId Writer::addTensor(const TensorRecord& tensor) {
  TensorInfo info = tensor.info;
  detail::TileLayout tiles;
  if (auto problem = detail::tileLayoutProblem(info, /*chooseTileSize=*/true, tiles))
    throw ValidationError(*problem, impl_->where("tensors"));
  if (tensor.data.size() != tiles.totalBytes)
    throw ValidationError("tensor '" + info.name + "' has " + std::to_string(tensor.data.size()) +
                              " bytes of data, its shape and dtype need " + std::to_string(tiles.totalBytes),
                          impl_->where("tensors"));
  info.tensorId = impl_->nextId<TensorInfo>(info.tensorId, impl_->lastTensor);
  info.tileBytes = static_cast<std::int64_t>(tiles.tileBytes);
  impl_->record(Boundary::PartOfBlock, [&] {
    impl_->bindAndStep(impl_->insertTensor, info);
    Statement& tile = impl_->insertTile;
    for (std::uint64_t t = 0; t < tiles.tileCount; ++t) {
      const auto raw = std::span<const std::uint8_t>(tensor.data).subspan(t * tiles.tileBytes, tiles.tileSize(t));
      auto guard = tile.use();
      tile.bind(1, info.tensorId);
      tile.bind(2, static_cast<std::int64_t>(t));
      tile.bind(3, static_cast<std::int64_t>(raw.size()));
      tile.bindBlob(4, impl_->compressor.compress(raw));
      tile.step();
    }
  });
  impl_->lastTensor = info.tensorId;
  return info.tensorId;
}

void Writer::addTokenStrings(std::span<const TokenString> strings) {
  impl_->record(Boundary::PartOfBlock, [&] {
    Statement& select = impl_->selectToken;
    for (const TokenString& token : strings) {
      impl_->bindAndStep(impl_->insertToken, token);
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
  const AnnotationId id = impl_->nextId<Annotation>(annotation.annotationId, impl_->lastAnnotation);
  impl_->insert(Boundary::PartOfBlock, impl_->insertAnnotation, annotation, id);
  impl_->lastAnnotation = id;
  return id;
}

void Writer::flush() {
  if (impl_->failed || impl_->closed) return;
  impl_->commit();
}

void Writer::close() { impl_->close(); }

StepId Writer::lastCommittedStep() const { return impl_->committedStep; }

IdShift Writer::pastExistingIds() const { return impl_->existing; }

const std::string& Writer::path() const { return impl_->path; }

}  // namespace dfi::session
