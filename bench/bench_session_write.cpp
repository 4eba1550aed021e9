// Session write throughput: steps (B=16, top-k 8 per slot) each with one statistic record,
// written through dfi::session::Writer, against a reference measured in the same run: raw
// sqlite3 inserting the very same encoded rows into the same tables with prepared statements in
// one transaction (the cost of SQLite itself, the floor any writer on it pays). Same pragmas
// (WAL, synchronous=NORMAL) and both timed up to a closed, checkpointed file.
// Prints one JSON line per figure.

#include <sqlite3.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "dfi/session/writer.h"
#include "synthetic_session.h"

using namespace dfi::session;

namespace {

constexpr std::int64_t kSteps = 200'000;
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

void check(int rc, sqlite3* db) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) throw std::runtime_error(sqlite3_errmsg(db));
}

template <typename T>
void bindArray(sqlite3_stmt* st, int index, const std::vector<T>& values) {
  sqlite3_bind_blob64(st, index, values.data(), values.size() * sizeof(T), SQLITE_STATIC);  // x86: already LE
}

double writeRawSqlite(const std::string& path, Workload& w) {
  { Writer(path, {.mode = OpenMode::Overwrite}).addRun(synthetic::run("bench")); }  // same schema, one run
  const auto start = std::chrono::steady_clock::now();
  sqlite3* db = nullptr;
  check(sqlite3_open(path.c_str(), &db), db);
  check(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16384; BEGIN",
                     nullptr, nullptr, nullptr), db);
  sqlite3_stmt *insertStep = nullptr, *insertStatistic = nullptr;
  check(sqlite3_prepare_v2(db, "INSERT INTO steps VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)", -1,
                           &insertStep, nullptr), db);
  check(sqlite3_prepare_v2(db, "INSERT INTO statistics VALUES(NULL,?1,?2,?3,?4,?5,?6)", -1, &insertStatistic, nullptr),
        db);
  for (std::int64_t i = 0; i < kSteps; ++i) {
    const StepRecord& s = stepFor(w, i);
    sqlite3_bind_int64(insertStep, 1, i + 1);
    sqlite3_bind_int64(insertStep, 2, 1);
    sqlite3_bind_int64(insertStep, 3, s.promptId);
    sqlite3_bind_int64(insertStep, 4, s.stepIndex);
    sqlite3_bind_int64(insertStep, 5, 0);
    sqlite3_bind_int64(insertStep, 6, s.anchorPosition);
    sqlite3_bind_int64(insertStep, 7, s.anchorToken);
    bindArray(insertStep, 8, s.draftTokens);
    bindArray(insertStep, 9, s.targetTokens);
    sqlite3_bind_int64(insertStep, 10, s.acceptedCount);
    sqlite3_bind_int64(insertStep, 11, s.bonusToken);
    bindArray(insertStep, 12, s.topKIds);
    bindArray(insertStep, 13, s.topKProbs);
    bindArray(insertStep, 14, s.garbleFlags);
    sqlite3_bind_text(insertStep, 15, s.maskVariant.data(), static_cast<int>(s.maskVariant.size()), SQLITE_STATIC);
    check(sqlite3_step(insertStep), db);
    sqlite3_reset(insertStep);
    const StatisticRecord& st = w.statistics[static_cast<std::size_t>(i % kPool)];
    sqlite3_bind_int64(insertStatistic, 1, 1);
    sqlite3_bind_int64(insertStatistic, 2, i + 1);
    sqlite3_bind_text(insertStatistic, 3, st.name.data(), static_cast<int>(st.name.size()), SQLITE_STATIC);
    sqlite3_bind_int64(insertStatistic, 4, st.layer);
    sqlite3_bind_int64(insertStatistic, 5, st.head);
    bindArray(insertStatistic, 6, st.values);
    check(sqlite3_step(insertStatistic), db);
    sqlite3_reset(insertStatistic);
  }
  check(sqlite3_exec(db, "COMMIT; PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE", nullptr, nullptr,
                     nullptr), db);
  sqlite3_finalize(insertStep);
  sqlite3_finalize(insertStatistic);
  sqlite3_close(db);
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
  const char* referenceName = "raw sqlite3, same rows, prepared statements, one transaction";
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
