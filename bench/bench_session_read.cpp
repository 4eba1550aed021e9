// Session read figures on a generated 200k-step session of about 1 GB (cached in the build
// tree): opening it and listing its runs, and reading one block's records (step, tree,
// statistics, tensor descriptions and the block's tensor data). Reference, measured in the same
// run: raw sqlite3 doing the least the same answer needs (open + SELECT * FROM runs; the step
// row by primary key). Also the resident memory after reading, against the file size.
// Prints one JSON line per figure.

#include <sqlite3.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "bench_size.h"
#include "dfi/session/reader.h"
#include "dfi/session/writer.h"
#include "synthetic_session.h"

using namespace dfi::session;
namespace fs = std::filesystem;

namespace {

const std::int64_t kSteps = dfi::bench::sized<std::int64_t>(200'000, 500);
constexpr std::int32_t kStepsPerPrompt = 500;
constexpr std::int32_t kRuns = 2;
constexpr std::int32_t kTensorEvery = 4;  // a hidden-state dump every 4th step

// A [16, 512] bfloat16 hidden-state dump with noisy mantissas: compresses little, like real ones.
TensorRecord hiddenStates(RunId run, StepId step) {
  TensorRecord t{.info = {.runId = run, .stepId = step, .name = "target.layers.20.hidden", .layer = 20,
                          .dtype = TensorDType::BF16, .shape = {16, 512}, .layout = "position,hidden"}};
  t.data.resize(16 * 512 * 2);
  for (std::size_t i = 0; i < t.data.size(); i += 8) {
    const std::uint64_t bits = synthetic::mix(static_cast<std::uint64_t>(step) * 8192 + i);
    for (std::size_t b = 0; b < 8; ++b) t.data[i + b] = static_cast<std::uint8_t>(bits >> (8 * b));
  }
  return t;
}

void generate(const std::string& path) {
  std::fprintf(stderr, "bench_session_read: generating %s (once)\n", path.c_str());
  const std::string partial = path + ".partial";
  {
    Writer writer(partial, {.mode = OpenMode::Overwrite});
    writer.addTokenStrings(synthetic::tokenStrings(4096));
    const std::int64_t perRun = kSteps / kRuns;
    for (std::int32_t r = 0; r < kRuns; ++r) {
      const RunId run = writer.addRun(synthetic::run("run" + std::to_string(r)));
      for (std::int64_t i = 0; i < perRun; ++i) {
        const PromptId prompt = i / kStepsPerPrompt;
        if (i % kStepsPerPrompt == 0) writer.addPrompt(synthetic::prompt(run, prompt));
        const StepId id = writer.addStep(synthetic::step(run, prompt, static_cast<std::int32_t>(i % kStepsPerPrompt)));
        writer.addTree(synthetic::tree(id, 6));
        writer.addStatistic(synthetic::statistic(run, id, 5, 16));
        if (id % kTensorEvery == 0) writer.addTensor(hiddenStates(run, id));
      }
    }
  }
  fs::rename(partial, path);
}

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The `percent` percentile of `v`.
double percentile(std::vector<double> v, std::size_t percent) {
  std::sort(v.begin(), v.end());
  return v[v.size() * percent / 100];
}

double rssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void printFigure(const char* figure, double value, const char* unit, double target, const char* reference,
                 double referenceValue) {
  std::printf(
      "{\"bench\":\"session_read\",\"figure\":\"%s\",\"value\":%.3f,\"unit\":\"%s\",\"target_max\":%.1f,"
      "\"reference\":\"%s\",\"reference_value\":%.3f,\"ratio\":%.2f}\n",
      figure, value, unit, target, reference, referenceValue, referenceValue > 0 ? value / referenceValue : 0.0);
}

}  // namespace

int main() {
  const std::string dir = DFI_BENCH_DATA_DIR;
  fs::create_directories(dir);
  const std::string path = dir + dfi::bench::sized<std::string>("/session_200k.dfi", "/session_smoke.dfi");
  if (!fs::exists(path)) generate(path);
  const double fileMb = static_cast<double>(fs::file_size(path)) / 1e6;

  std::vector<double> openTimes, rawOpenTimes;
  for (int i = 0; i < dfi::bench::sized(15, 3); ++i) {
    auto start = std::chrono::steady_clock::now();
    {
      Reader reader(path);
      if (reader.runs().size() != kRuns) return 1;
      openTimes.push_back(msSince(start));
    }
    start = std::chrono::steady_clock::now();
    sqlite3* db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_exec(db, "SELECT * FROM runs", nullptr, nullptr, nullptr);
    rawOpenTimes.push_back(msSince(start));
    sqlite3_close(db);
  }
  printFigure("open_and_list_runs_ms", percentile(openTimes, 50), "ms", 300, "raw sqlite3 open + SELECT * FROM runs",
              percentile(rawOpenTimes, 50));

  Reader reader(path);
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* rawStep = nullptr;
  sqlite3_prepare_v2(db, "SELECT * FROM steps WHERE step_id=?1", -1, &rawStep, nullptr);
  std::mt19937_64 random(7);
  std::uniform_int_distribution<StepId> anyStep(1, kSteps);
  std::vector<double> blockTimes, rawTimes;
  std::size_t bytesRead = 0;
  const int blocks = dfi::bench::sized(2000, 20);
  for (int i = 0; i < blocks; ++i) {
    const StepId id = anyStep(random);
    auto start = std::chrono::steady_clock::now();
    const BlockRecords block = reader.block(id);
    for (const TensorInfo& t : block.tensors) bytesRead += reader.readTensor(t.tensorId).data.size();
    bytesRead += reader.tokenStrings(block.step.draftTokens).size();
    blockTimes.push_back(msSince(start));
    start = std::chrono::steady_clock::now();
    sqlite3_bind_int64(rawStep, 1, id);
    while (sqlite3_step(rawStep) == SQLITE_ROW) {
    }
    sqlite3_reset(rawStep);
    rawTimes.push_back(msSince(start));
  }
  sqlite3_finalize(rawStep);
  sqlite3_close(db);
  printFigure("read_one_block_ms", percentile(blockTimes, 50), "ms", 5, "raw sqlite3 step row by primary key",
              percentile(rawTimes, 50));
  printFigure("read_one_block_p99_ms", percentile(blockTimes, 99), "ms", 5, "raw sqlite3 step row by primary key, p99",
              percentile(rawTimes, 99));
  std::printf(
      "{\"bench\":\"session_read\",\"figure\":\"peak_rss_mb_after_reading_blocks\",\"value\":%.1f,\"unit\":\"MB\","
      "\"reference\":\"session file size\",\"reference_value\":%.1f,\"ratio\":%.4f,\"steps\":%lld,\"blocks\":%d,"
      "\"tensor_bytes_read\":%zu}\n",
      rssMb(), fileMb, rssMb() / fileMb, static_cast<long long>(kSteps), blocks, bytesRead);
  return 0;
}
