// Crash safety: a writer in a child process is killed (SIGKILL) at random moments, or runs into
// a size limit (RLIMIT_FSIZE, what a full disk looks like to it); every step it reported as
// committed must then be in the file, intact, and the file must open.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "dfi/base/error.h"
#include "dfi/session/reader.h"
#include "dfi/session/writer.h"
#include "session_test_util.h"

using namespace dfi::session;

namespace {

constexpr std::int32_t kStepsPerRound = 400;
// Sentinels the child sends after the committed step ids.
constexpr StepId kEndedDiskFull = -1;
constexpr StepId kEndedOtherError = -2;
constexpr StepId kEndedNormally = -3;

void report(int fd, StepId value) {
  // A full pipe would block the child; the parent drains it, so a short write cannot happen.
  [[maybe_unused]] const ssize_t n = ::write(fd, &value, sizeof value);
}

// Records rounds of steps (each with a tree and a statistic, a tensor now and then), closing
// and reopening the writer between rounds so that kills also land in checkpoints.
void recordForever(const std::string& path, int fd, int rounds) {
  RunId run = 0;
  for (int round = 0; round < rounds; ++round) {
    Writer writer(path, {.mode = round == 0 ? OpenMode::Overwrite : OpenMode::Append,
                         .batchRecords = 37,
                         .batchInterval = std::chrono::milliseconds(3),
                         .onCommit = [fd](StepId last) { report(fd, last); }});
    if (round == 0) run = writer.addRun(synthetic::run("crash"));
    for (std::int32_t i = 0; i < kStepsPerRound; ++i) {
      const StepId id = writer.addStep(synthetic::step(run, round, i));
      writer.addTree(synthetic::tree(id, 3));
      writer.addStatistic(synthetic::statistic(run, id, 1, 15));
      if (i % 100 == 0) writer.addTensor(synthetic::attention(run, id, 0, 0, 96));
    }
    writer.close();
  }
}

[[noreturn]] void childMain(const std::string& path, int fd, int rounds, rlim_t sizeLimit) {
  StepId ending = kEndedNormally;
  try {
    if (sizeLimit) {
      ::signal(SIGXFSZ, SIG_IGN);  // writes past the limit then fail with EFBIG instead
      const rlimit limit{sizeLimit, sizeLimit};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    recordForever(path, fd, rounds);
  } catch (const dfi::IoError& e) {
    ending = std::string(e.what()).find("disk full") != std::string::npos ? kEndedDiskFull : kEndedOtherError;
    if (ending == kEndedOtherError) std::fprintf(stderr, "child: %s\n", e.what());
  } catch (...) {
    ending = kEndedOtherError;
  }
  report(fd, ending);
  ::_exit(0);
}

struct ChildResult {
  StepId lastCommitted = 0;
  StepId ending = 0;  // a sentinel, or 0 when killed before it could send one
};

// Runs the writer in a child; kills it `killAfter` after its start, or after its first commit
// when `fromFirstCommit` (fork and schema creation take a variable time on a loaded machine);
// never when killAfter is zero.
ChildResult runChild(const std::string& path, int rounds, std::chrono::microseconds killAfter,
                     bool fromFirstCommit = false, rlim_t sizeLimit = 0) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    childMain(path, fds[1], rounds, sizeLimit);
  }
  ::close(fds[1]);
  ChildResult result;
  auto deadline = std::chrono::steady_clock::now() + killAfter;
  bool clockStarted = !fromFirstCommit;
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  auto drain = [&] {
    StepId value = 0;
    while (::read(fds[0], &value, sizeof value) == sizeof value) {
      if (value >= 0) result.lastCommitted = std::max(result.lastCommitted, value);
      else result.ending = value;
    }
  };
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    drain();
    if (!clockStarted && result.lastCommitted > 0) {
      clockStarted = true;
      deadline = std::chrono::steady_clock::now() + killAfter;
    }
    if (killAfter.count() > 0 && clockStarted && std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  drain();
  ::close(fds[0]);
  return result;
}

// Every step up to `committed` is present, in order, equal to what the child wrote, with its
// tree and statistic (a step commits together with the records that follow it).
void expectIntact(const std::string& path, StepId committed) {
  Reader reader(path);
  ASSERT_GE(reader.lastStepId(), committed);
  StepId expectedId = 1;
  for (StepId seen = 0; seen < committed;) {
    const auto steps = reader.stepsSince(seen, 500);
    ASSERT_FALSE(steps.empty()) << "steps after " << seen << " are missing";
    for (const StepRecord& step : steps) {
      if (step.stepId > committed) break;
      ASSERT_EQ(step.stepId, expectedId++);
      StepRecord expected = synthetic::step(step.runId, step.promptId, step.stepIndex);
      expected.stepId = step.stepId;
      ASSERT_EQ(step, expected);
      ASSERT_EQ(step.stepId, step.promptId * kStepsPerRound + step.stepIndex + 1);
      ASSERT_EQ(reader.tree(step.stepId), synthetic::tree(step.stepId, 3));
      ASSERT_EQ(reader.statistics(step.runId, step.stepId).size(), 1u);
    }
    seen = steps.back().stepId;
  }
}

}  // namespace

TEST(SessionCrashSafety, SurvivesFiftyKillsAtRandomMoments) {
  const std::string path = testutil::freshPath("killed.dfi");
  std::mt19937 random(20260101);
  std::uniform_int_distribution<int> delayUs(1'000, 200'000);
  int killedAfterCommits = 0;
  for (int trial = 0; trial < 50; ++trial) {
    // One kill in ten lands during start-up (file creation, schema, journal switch).
    const bool duringStartup = trial % 10 == 0;
    const auto delay = std::chrono::microseconds(duringStartup ? delayUs(random) / 20 : delayUs(random));
    const auto result = runChild(path, 1000, delay, !duringStartup);
    ASSERT_EQ(result.ending, 0) << "the child finished before the kill; lengthen its work";
    if (result.lastCommitted > 0) ++killedAfterCommits;
    SCOPED_TRACE("trial " + std::to_string(trial) + ", committed " + std::to_string(result.lastCommitted));
    // A kill before the first commit may leave an empty file or one without its schema: no
    // session yet, which must be a dfi::Error. Once a commit is reported the file must open.
    if (result.lastCommitted > 0) {
      expectIntact(path, result.lastCommitted);
    } else {
      try {
        Reader(path).runs();
      } catch (const dfi::Error&) {
      }
    }
  }
  EXPECT_GE(killedAfterCommits, 45) << "kills must land while steps are being committed";
}

TEST(SessionCrashSafety, FullDiskEndsTheRunWithAClearErrorAndKeepsCommittedSteps) {
  const std::string path = testutil::freshPath("full.dfi");
  const auto result = runChild(path, 1000, std::chrono::microseconds(0), false, 3 << 20);
  EXPECT_EQ(result.ending, kEndedDiskFull);
  ASSERT_GT(result.lastCommitted, 100);
  expectIntact(path, result.lastCommitted);
}
