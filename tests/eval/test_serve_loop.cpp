// serve's request loop (app/eval/serve_loop.h) driven by a scripted backend: the same reading
// thread, queue, worker and one writer as dflash-eval serve, without libtorch, so the preset
// tsan runs it under ThreadSanitizer. Requests arrive through a pipe-like stream while others
// run; each request must get exactly one terminal reply under its own id, its frames in order
// and whole, and a cancel or shutdown must reach the queued and the active request alike.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <streambuf>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "dfi/base/error.h"
#include "dfi/protocol/frame.h"
#include "dfi/protocol/messages.h"
#include "serve_loop.h"

using namespace dfi;
using protocol::RequestId;

namespace {

// The reading end of serve's input, fed from the test's thread: the loop's reading thread blocks
// in it as on a pipe, so requests arrive while earlier ones run.
class LineFeed : public std::streambuf {
 public:
  void push(std::string bytes) {
    {
      std::lock_guard lock(mutex_);
      chunks_.push_back(std::move(bytes));
    }
    changed_.notify_one();
  }
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    changed_.notify_one();
  }

 protected:
  int_type underflow() override {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return closed_ || !chunks_.empty(); });
    if (chunks_.empty()) return traits_type::eof();
    current_ = std::move(chunks_.front());
    chunks_.pop_front();
    setg(current_.data(), current_.data(), current_.data() + current_.size());
    return traits_type::to_int_type(current_.front());
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> chunks_;
  std::string current_;
  bool closed_ = false;
};

// What a scripted run does, named by its target path.
constexpr const char* kUntilCancelled = "until-cancelled";  // runs until its cancel arrives
constexpr const char* kRefused = "refused";                 // a dfi::Error (exit code 1)
constexpr const char* kCrashes = "crashes";                 // any other exception (engine failure, 70)
// Anything else: maxNewTokens progress frames, then done.

class ScriptedBackend : public eval::ServeBackend {
 public:
  protocol::Hello hello() override { return {.engineVersion = "scripted"}; }

  void execute(const eval::ServeJob& job, eval::FrameStream& out, const CancellationToken& cancel) override {
    const RequestId id = eval::requestIdOf(job);
    {
      std::lock_guard lock(mutex_);
      started_.push_back(id);
    }
    startedChanged_.notify_all();
    std::visit(protocol::Overloaded{[&](const protocol::RunRequest& r) { run(r, out, cancel); },
                                    [&](const protocol::InspectRequest& r) { inspect(r, out); },
                                    [&](const protocol::DiagnoseRequest&) {
                                      throw Error("scripted diagnosis refused");
                                    }},
               job);
  }

  void waitUntilStarted(RequestId id) {
    std::unique_lock lock(mutex_);
    startedChanged_.wait(lock, [&] { return std::ranges::find(started_, id) != started_.end(); });
  }

  std::vector<RequestId> started() {
    std::lock_guard lock(mutex_);
    return started_;
  }

 private:
  static void run(const protocol::RunRequest& r, eval::FrameStream& out, const CancellationToken& cancel) {
    if (r.target == kRefused) throw Error("scripted run refused");
    if (r.target == kCrashes) throw std::runtime_error("scripted crash");
    if (r.target == kUntilCancelled) {
      while (!cancel.cancelled()) std::this_thread::sleep_for(std::chrono::microseconds(100));
      throw CancelledError("scripted run cancelled");
    }
    for (int i = 0; i < r.maxNewTokens; ++i) {
      if (cancel.cancelled()) throw CancelledError("scripted run cancelled");
      out.write(protocol::encodeMessage(protocol::Progress{.requestId = r.requestId, .done = i, .total = r.maxNewTokens}));
      std::this_thread::yield();
    }
    out.write(protocol::encodeMessage(protocol::Done{.requestId = r.requestId}));
  }

  // An inspect's answer is written as one group: no other frame may fall between its parts.
  static void inspect(const protocol::InspectRequest& r, eval::FrameStream& out) {
    const std::vector<protocol::Frame> frames{
        protocol::encodeMessage(protocol::Progress{.requestId = r.requestId, .done = 0, .total = 2}),
        protocol::encodeMessage(protocol::Progress{.requestId = r.requestId, .done = 1, .total = 2}),
        protocol::encodeMessage(protocol::Done{.requestId = r.requestId, .request = protocol::RequestKind::Inspect})};
    out.write(frames);
  }

  std::mutex mutex_;
  std::condition_variable startedChanged_;
  std::vector<RequestId> started_;
};

std::string line(const protocol::Request& request) {
  std::ostringstream out;
  protocol::writeFrame(out, protocol::encodeMessage(request));
  return out.str();
}

std::string runLine(RequestId id, const std::string& target, int frames = 0) {
  protocol::RunRequest r;
  r.requestId = id;
  r.target = target;
  r.maxNewTokens = frames;
  return line(r);
}

std::string inspectLine(RequestId id) {
  protocol::InspectRequest r;
  r.requestId = id;
  return line(r);
}

std::string diagnoseLine(RequestId id) {
  protocol::DiagnoseRequest r;
  r.requestId = id;
  return line(r);
}

std::string cancelLine(RequestId id) { return line(protocol::CancelRequest{.requestId = id}); }

// One serve() on its own thread, fed through a LineFeed.
class ServedLoop {
 public:
  ServedLoop() : in_(&feed_), thread_([this] { exitCode_ = loop_.serve(in_, out_); }) {}
  ~ServedLoop() { finish(); }

  void send(const std::string& bytes) { feed_.push(bytes); }
  ScriptedBackend& backend() { return backend_; }

  // Closes the input and waits for the loop; the replies it wrote, decoded.
  std::vector<protocol::Reply> finish() {
    if (thread_.joinable()) {
      feed_.close();
      thread_.join();
    }
    std::istringstream written(out_.str());
    protocol::FrameReader reader(written, "serve stdout");
    std::vector<protocol::Reply> replies;
    while (auto frame = reader.next()) replies.push_back(protocol::decodeReply(*frame, "serve stdout"));
    return replies;
  }
  int exitCode() const { return exitCode_; }

 private:
  ScriptedBackend backend_;
  eval::ServeLoop loop_{backend_};
  LineFeed feed_;
  std::istream in_;
  std::ostringstream out_;  // written under FrameStream's lock, read after the join
  int exitCode_ = -1;
  std::thread thread_;
};

RequestId idOf(const protocol::Reply& reply) {
  return std::visit(protocol::Overloaded{[](const protocol::Hello&) { return protocol::kNoRequest; },
                                         [](const auto& r) { return r.requestId; }},
                    reply);
}

bool isTerminal(const protocol::Reply& reply) {
  return std::holds_alternative<protocol::Done>(reply) || std::holds_alternative<protocol::ErrorReply>(reply);
}

// Every reply of each request id, in stream order (the hello and unattributable errors apart).
std::map<RequestId, std::vector<protocol::Reply>> byRequest(const std::vector<protocol::Reply>& replies) {
  std::map<RequestId, std::vector<protocol::Reply>> grouped;
  for (const auto& reply : replies) grouped[idOf(reply)].push_back(reply);
  return grouped;
}

const protocol::ErrorReply& errorOf(const std::vector<protocol::Reply>& replies) {
  return std::get<protocol::ErrorReply>(replies.back());
}

TEST(ServeLoop, HelloFirstThenEachRequestAnsweredInOrder) {
  ServedLoop served;
  served.send(runLine(1, "frames", 3) + inspectLine(2) + diagnoseLine(3) + runLine(4, kRefused) + runLine(5, kCrashes));
  const auto replies = served.finish();
  EXPECT_EQ(served.exitCode(), 0);
  ASSERT_FALSE(replies.empty());
  EXPECT_EQ(std::get<protocol::Hello>(replies.front()).engineVersion, "scripted");
  auto grouped = byRequest(replies);
  ASSERT_EQ(grouped[1].size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(std::get<protocol::Progress>(grouped[1][i]).done, i);
  EXPECT_TRUE(std::holds_alternative<protocol::Done>(grouped[1][3]));
  EXPECT_EQ(std::get<protocol::Done>(grouped[2].back()).request, protocol::RequestKind::Inspect);
  EXPECT_EQ(errorOf(grouped[3]).message, "scripted diagnosis refused");
  EXPECT_EQ(errorOf(grouped[4]).exitCode, 1);
  EXPECT_EQ(errorOf(grouped[5]).message, "engine failure: scripted crash");
  EXPECT_EQ(errorOf(grouped[5]).exitCode, 70);
  EXPECT_EQ(served.backend().started(), (std::vector<RequestId>{1, 2, 3, 4, 5}));
}

TEST(ServeLoop, CancelStopsTheActiveRequestAndRemovesAQueuedOne) {
  ServedLoop served;
  served.send(runLine(1, kUntilCancelled) + runLine(2, "frames", 2) + runLine(3, "frames", 2));
  served.backend().waitUntilStarted(1);
  served.send(cancelLine(3) + cancelLine(1) + cancelLine(99));
  const auto replies = served.finish();
  auto grouped = byRequest(replies);
  EXPECT_EQ(errorOf(grouped[1]).exitCode, 130);
  EXPECT_EQ(errorOf(grouped[1]).message, "scripted run cancelled");
  ASSERT_EQ(grouped[3].size(), 1u);  // answered once by the loop, never started
  EXPECT_EQ(errorOf(grouped[3]).message, "request 3 cancelled before it started");
  EXPECT_TRUE(std::holds_alternative<protocol::Done>(grouped[2].back()));
  EXPECT_FALSE(grouped.contains(99));
  EXPECT_EQ(served.backend().started(), (std::vector<RequestId>{1, 2}));
}

TEST(ServeLoop, ShutdownCancelsTheActiveRequestAndAnswersTheQueue) {
  ServedLoop served;
  served.send(runLine(1, kUntilCancelled) + runLine(2, "frames", 1) + inspectLine(3));
  served.backend().waitUntilStarted(1);
  served.send(line(protocol::ShutdownRequest{}) + runLine(4, "frames", 1));  // 4 is never read
  const auto replies = served.finish();
  EXPECT_EQ(served.exitCode(), 0);
  auto grouped = byRequest(replies);
  EXPECT_EQ(errorOf(grouped[1]).exitCode, 130);
  EXPECT_EQ(errorOf(grouped[2]).message, "request 2 not started: the server was shut down");
  EXPECT_EQ(errorOf(grouped[3]).message, "request 3 not started: the server was shut down");
  EXPECT_FALSE(grouped.contains(4));
}

TEST(ServeLoop, ALineThatIsNotARequestIsAnsweredAndTheLoopGoesOn) {
  ServedLoop served;
  protocol::RunRequest mistyped;
  mistyped.requestId = 7;
  protocol::Frame frame = protocol::encodeMessage(mistyped);
  frame.header["max_new_tokens"] = "many";
  std::ostringstream mistypedLine;
  protocol::writeFrame(mistypedLine, frame);
  served.send("{not json\n" + mistypedLine.str() + runLine(8, "frames", 1));
  auto grouped = byRequest(served.finish());
  ASSERT_EQ(grouped[protocol::kNoRequest].size(), 2u);  // the hello and the line with no id
  EXPECT_TRUE(std::holds_alternative<protocol::ErrorReply>(grouped[protocol::kNoRequest][1]));
  ASSERT_EQ(grouped[7].size(), 1u);
  EXPECT_NE(errorOf(grouped[7]).message.find("max_new_tokens"), std::string::npos) << errorOf(grouped[7]).message;
  EXPECT_TRUE(std::holds_alternative<protocol::Done>(grouped[8].back()));
}

// 500 requests pipelined without waiting, as a GUI queueing runs and inspects and cancelling some
// would send them: cancels of queued, active, finished and unknown ids, lines that do not decode,
// and (for half the seeds) a shutdown part way. Every request that was read gets exactly one
// terminal reply; a run's frames are its own, in order, and stop only at its terminal reply; an
// inspect's frames are contiguous; a cancel has no reply of its own.
TEST(ServeLoop, PipelinedMixedRequestsEachGetOneTerminalReply) {
  for (unsigned seed = 0; seed < 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 random(seed);
    const bool shutsDown = seed % 2 == 1;
    const int shutdownAt = shutsDown ? 250 + static_cast<int>(random() % 200) : -1;
    std::map<RequestId, std::string> kinds;  // request id -> "run" | "until" | "inspect" | ...
    std::vector<RequestId> untilCancelled;
    int malformed = 0;
    ServedLoop served;
    std::string batch;
    RequestId next = 1;
    for (int i = 0; i < 500; ++i) {
      if (i == shutdownAt) {
        batch += line(protocol::ShutdownRequest{});
        break;
      }
      const unsigned roll = random() % 100;
      const RequestId id = next++;
      if (roll < 45) {
        batch += runLine(id, "frames", static_cast<int>(random() % 12));
        kinds[id] = "run";
      } else if (roll < 50) {
        batch += runLine(id, kUntilCancelled);
        kinds[id] = "until";
        untilCancelled.push_back(id);
      } else if (roll < 62) {
        batch += inspectLine(id);
        kinds[id] = "inspect";
      } else if (roll < 66) {
        batch += diagnoseLine(id);
        kinds[id] = "diagnose";
      } else if (roll < 70) {
        batch += runLine(id, random() % 2 ? kRefused : kCrashes);
        kinds[id] = "failing";
      } else if (roll < 90) {  // a cancel of an earlier id (queued, active or finished) or an unknown one
        const RequestId target = roll < 86 && id > 1 ? 1 + static_cast<RequestId>(random() % (id - 1)) : 100000 + id;
        batch += cancelLine(target);
      } else {
        batch += "{\"type\": \"run\", \"request_id\": \n";  // not even its id can be read
        ++malformed;
      }
      // Every until-cancelled run gets its cancel a few requests later, so none runs forever.
      if (!untilCancelled.empty() && random() % 4 == 0) {
        batch += cancelLine(untilCancelled.front());
        untilCancelled.erase(untilCancelled.begin());
      }
      if (batch.size() > 4096) {  // arrives in pieces, as through a pipe
        served.send(batch);
        batch.clear();
      }
    }
    for (RequestId id : untilCancelled) batch += cancelLine(id);
    served.send(batch);
    const auto replies = served.finish();
    EXPECT_EQ(served.exitCode(), 0);

    auto grouped = byRequest(replies);
    EXPECT_EQ(grouped[protocol::kNoRequest].size(), 1u + malformed);  // the hello, one error per bad line
    for (const auto& [id, kind] : kinds) {
      SCOPED_TRACE("request " + std::to_string(id) + " (" + kind + ")");
      const auto& mine = grouped[id];
      ASSERT_FALSE(mine.empty());
      EXPECT_EQ(std::ranges::count_if(mine, isTerminal), 1);
      EXPECT_TRUE(isTerminal(mine.back()));
      for (std::size_t i = 0; i + 1 < mine.size(); ++i)
        EXPECT_EQ(std::get<protocol::Progress>(mine[i]).done, static_cast<std::int64_t>(i));
      if (kind == "until" || kind == "diagnose" || kind == "failing") {
        EXPECT_TRUE(std::holds_alternative<protocol::ErrorReply>(mine.back()));
      }
    }
    for (const auto& [id, mine] : grouped) {
      if (id != protocol::kNoRequest) {
        EXPECT_TRUE(kinds.contains(id)) << "a reply to request " << id << " never sent";
      }
    }
    // An inspect's three frames stand together in the stream.
    for (std::size_t i = 0; i < replies.size(); ++i) {
      const RequestId id = idOf(replies[i]);
      if (!kinds.contains(id) || kinds.at(id) != "inspect" || !std::holds_alternative<protocol::Progress>(replies[i]))
        continue;
      ASSERT_LT(i + 2, replies.size());
      EXPECT_EQ(idOf(replies[i + 1]), id);
      EXPECT_EQ(idOf(replies[i + 2]), id);
      i += 2;
    }
  }
}

}  // namespace
