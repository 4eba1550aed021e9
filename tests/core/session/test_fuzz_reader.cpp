// Fuzzes the reader with damaged copies of a real session (random byte flips, truncations,
// both) for DFI_FUZZ_SECONDS (default 60). Every read path runs on each copy; only dfi::Error
// may come out. Any other exception fails the test, and a crash fails it too.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

#include "dfi/analysis/metrics_export.h"
#include "dfi/analysis/run_metrics.h"
#include "dfi/base/error.h"
#include "dfi/session/export.h"
#include "dfi/session/reader.h"
#include "session_test_util.h"

using namespace dfi::session;
namespace fs = std::filesystem;

namespace {

std::vector<char> readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const std::string& path, const std::vector<char>& bytes, std::size_t size) {
  for (const char* suffix : {"-wal", "-shm", "-journal"}) fs::remove(path + suffix);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(size));
}

// Everything a viewer or the export command can ask of a file.
void readEverything(const std::string& path) {
  Reader reader(path);
  reader.refresh();
  for (const RunRecord& run : reader.runs()) {
    reader.stepCount(run.runId);
    for (const PromptRecord& prompt : reader.prompts(run.runId)) reader.steps(run.runId, prompt.promptId, 0, 50);
    dfi::analysis::computeRunMetrics(reader, run);
    reader.annotations(run.runId);
    reader.statistics(run.runId, 0);
  }
  for (StepId id = 1, last = std::min<StepId>(reader.lastStepId(), 200); id <= last; ++id) {
    if (!reader.step(id)) continue;
    const BlockRecords block = reader.block(id);
    for (const TensorInfo& tensor : block.tensors) {
      reader.readTensor(tensor.tensorId);
      if (!tensor.shape.empty() && tensor.shape[0] > 2) reader.readTensorRows(tensor.tensorId, 1, 2);
    }
    reader.tokenStrings(block.step.draftTokens);
  }
  reader.stepsSince(0, 100);
  std::ostringstream sink;
  for (auto format : {ExportFormat::Csv, ExportFormat::Json}) {
    for (auto what : {ExportWhat::Runs, ExportWhat::Steps}) exportSession(reader, what, format, sink);
    dfi::analysis::exportRunMetrics(reader, format, sink);
  }
}

}  // namespace

TEST(SessionFuzz, DamagedCopiesGiveErrorsNeverCrashes) {
  const std::string original = testutil::freshPath("fuzz_original.dfi");
  testutil::writeSmallSession(original);
  ASSERT_NO_THROW(readEverything(original));
  const std::vector<char> pristine = readAll(original);
  const std::string damaged = testutil::freshPath("fuzz_damaged.dfi");

  const char* env = std::getenv("DFI_FUZZ_SECONDS");
  const auto budget = std::chrono::seconds(env ? std::atoi(env) : 60);
  std::mt19937_64 random(12345);
  const auto deadline = std::chrono::steady_clock::now() + budget;
  int copies = 0, rejected = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    std::vector<char> bytes = pristine;
    std::size_t size = bytes.size();
    const int kind = static_cast<int>(random() % 3);  // 0 flips, 1 truncation, 2 both
    if (kind != 1) {
      const int flips = 1 + static_cast<int>(random() % 16);
      for (int f = 0; f < flips; ++f) {
        // A third of the flips hit the first page: header, schema and root pages live there.
        const std::size_t range = random() % 3 == 0 ? std::min<std::size_t>(size, 8192) : size;
        bytes[random() % range] ^= static_cast<char>(1u << (random() % 8));
      }
    }
    if (kind != 0) size = random() % size;
    writeAll(damaged, bytes, size);
    ++copies;
    try {
      readEverything(damaged);
    } catch (const dfi::Error&) {
      ++rejected;
    }
  }
  std::printf("fuzzed %d damaged copies, %d rejected with a dfi::Error, %d read without error\n", copies, rejected,
              copies - rejected);
  EXPECT_GT(copies, 100);
  EXPECT_GT(rejected, 0);
}
