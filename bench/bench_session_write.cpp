// Session write throughput: steps (B=16, top-k 8 per slot) each with one statistic record,
// written through dfi::session::Writer, against a reference measured in the same run: SQLite
// alone inserting the very same rows into the same tables in one transaction, with the
// writer's own INSERTs and field binding (sql_table.h, generated from the record tables, so the
// reference follows every schema change) and none of the writer's work around them (batches,
// record checks, ids): the floor any writer on SQLite pays. Same pragmas (WAL,
// synchronous=NORMAL) and both timed up to a closed, checkpointed file.
// Prints one JSON line per figure.

#include <sqlite3.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "bench_size.h"
#include "dfi/session/writer.h"
#include "sql_table.h"
#include "sqlite_handle.h"
#include "synthetic_session.h"

using namespace dfi::session;

namespace {

const std::int64_t kSteps = dfi::bench::sized<std::int64_t>(200'000, 500);
constexpr std::int32_t kPool = 1000;  // distinct step bodies, re-keyed per write (generation is not timed)

struct Workload {
  std::vector<StepRecord> steps;
  std::vector<StatisticRecord> statistics;
};

Workload makeWorkload() {
  Workload w;
  for (std::int32_t i = 0; i < kPool; ++i) {
    w.steps.push_back(synthetic::step(1, 0, i));
    w.statistics.push_back(synthetic::statistic(1, 0, 5, 16));
  }
  return w;
}

// Re-keys pooled record `i` in place as step i (prompt i / kPool, index i % kPool).
StepRecord& stepFor(Workload& w, std::int64_t i) {
  StepRecord& step = w.steps[static_cast<std::size_t>(i % kPool)];
  step.promptId = i / kPool;
  step.stepIndex = static_cast<std::int32_t>(i % kPool);
  return step;
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// CPU seconds (user + system) of this process: on a shared, overloaded machine the wall time
// also measures the neighbours, so the CPU figure is reported beside it.
double cpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto toSeconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return toSeconds(usage.ru_utime) + toSeconds(usage.ru_stime);
}

struct Timing {
  double wall = 1e30;
  double cpu = 1e30;
  template <typename Write>
  void keepBest(Write&& write) {
    const double cpuStart = cpuSeconds();
    wall = std::min(wall, write());
    cpu = std::min(cpu, cpuSeconds() - cpuStart);
  }
};

double writeWithWriter(const std::string& path, Workload& w) {
  const auto start = std::chrono::steady_clock::now();
  Writer writer(path, {.mode = OpenMode::Overwrite});
  const RunId run = writer.addRun(synthetic::run("bench"));
  for (std::int64_t i = 0; i < kSteps; ++i) {
    StepRecord& step = stepFor(w, i);
    step.runId = run;
    StatisticRecord& statistic = w.statistics[static_cast<std::size_t>(i % kPool)];
    statistic.stepId = writer.addStep(step);
    writer.addStatistic(statistic);
  }
  writer.close();
  return seconds(start);
}

double writeRawSqlite(const std::string& path, Workload& w) {
  { Writer(path, {.mode = OpenMode::Overwrite}).addRun(synthetic::run("bench")); }  // same schema, one run
  const auto start = std::chrono::steady_clock::now();
  detail::Database db(path, SQLITE_OPEN_READWRITE);
  db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16384; BEGIN");
  detail::Statement insertStep(db, detail::insertSql<StepRecord>(), "steps"),
      insertStatistic(db, detail::insertSql<StatisticRecord>(), "statistics");
  detail::RowScratch scratch;
  for (std::int64_t i = 0; i < kSteps; ++i) {
    StepRecord& step = stepFor(w, i);
    step.stepId = i + 1;
    step.runId = 1;
    detail::bindFields(insertStep, step, scratch);
    insertStep.run();
    StatisticRecord& statistic = w.statistics[static_cast<std::size_t>(i % kPool)];
    statistic.stepId = step.stepId;
    detail::bindFields(insertStatistic, statistic, scratch);
    insertStatistic.run();
  }
  db.exec("COMMIT; PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE");
  return seconds(start);
}

}  // namespace

int main() {
  namespace fs = std::filesystem;
  const std::string dir = DFI_BENCH_DATA_DIR;
  fs::create_directories(dir);
  const std::string ours = dir + "/bench_write_writer.dfi", reference = dir + "/bench_write_raw.dfi";
  Workload w = makeWorkload();
  // Alternate three rounds each and keep the best: the machine is shared and noisy.
  Timing writer, raw;
  for (int round = 0; round < 3; ++round) {
    writer.keepBest([&] { return writeWithWriter(ours, w); });
    raw.keepBest([&] { return writeRawSqlite(reference, w); });
  }
  const double fileMb = static_cast<double>(fs::file_size(ours)) / 1e6;
  const char* referenceName = "SQLite alone: the writer's INSERTs of the same rows, prepared once, one transaction";
  for (const auto& [figure, ours, theirs] : {std::tuple{"steps_per_second", writer.wall, raw.wall},
                                             std::tuple{"steps_per_cpu_second", writer.cpu, raw.cpu}})
    std::printf(
        "{\"bench\":\"session_write\",\"figure\":\"%s\",\"value\":%.0f,\"unit\":\"steps/s\","
        "\"target\":50000,\"steps\":%lld,\"top_k\":8,\"block_size\":16,\"statistics_per_step\":1,"
        "\"reference\":\"%s\",\"reference_value\":%.0f,\"ratio\":%.3f,\"file_mb\":%.1f}\n",
        figure, kSteps / ours, static_cast<long long>(kSteps), referenceName, kSteps / theirs, theirs / ours, fileMb);
  fs::remove(ours);
  fs::remove(reference);
  return 0;
}
