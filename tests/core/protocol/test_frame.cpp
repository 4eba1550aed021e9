#include <gtest/gtest.h>

#include <sstream>

#include <sys/resource.h>

#include "dfi/base/error.h"
#include "dfi/protocol/frame.h"

using namespace dfi::protocol;

TEST(Frame, TextAndBinaryFramesRoundTrip) {
  std::stringstream wire;
  std::string binary("\0\n\xff payload", 11);
  writeFrame(wire, {{{"type", "hello"}, {"version", 1}}, ""});
  writeFrame(wire, {{{"type", "tile"}}, binary});
  FrameReader reader(wire, "engine");
  auto first = reader.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->header["type"], "hello");
  EXPECT_TRUE(first->payload.empty());
  auto second = reader.next();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->payload, binary);
  EXPECT_FALSE(second->header.contains("payload_bytes"));
  EXPECT_FALSE(reader.next());
}

TEST(Frame, MalformedInputNamesStreamAndLine) {
  std::stringstream wire("{\"type\":\"ok\"}\nnot json\n");
  FrameReader reader(wire, "engine stdout");
  EXPECT_TRUE(reader.next());
  try {
    reader.next();
    FAIL() << "expected a FormatError";
  } catch (const dfi::FormatError& e) {
    EXPECT_EQ(e.context().file, "engine stdout");
    EXPECT_EQ(e.context().item, "line 2");
  }
}

TEST(Frame, TruncatedPayloadIsAnError) {
  std::stringstream wire("{\"payload_bytes\":100}\nshort");
  FrameReader reader(wire, "engine");
  EXPECT_THROW(reader.next(), dfi::FormatError);
}

// A length the stream does not deliver (a corrupted header, or a request claiming the maximum)
// costs the bytes that arrived, not the bytes claimed: the server reads such lines from anyone.
TEST(Frame, AClaimedPayloadIsNotAllocatedBeforeItArrives) {
  std::stringstream wire("{\"payload_bytes\":" + std::to_string(kMaxPayloadBytes) + "}\nonly this");
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  try {
    FrameReader(wire, "engine").next();
    FAIL() << "expected a FormatError";
  } catch (const dfi::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("(got 9)"), std::string::npos) << e.what();
  }
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024) << "peak resident KiB grew";
}

TEST(Frame, OversizedOrNegativeLengthIsRejected) {
  std::stringstream huge("{\"payload_bytes\":99999999999}\n");
  EXPECT_THROW(FrameReader(huge, "s").next(), dfi::FormatError);
  std::stringstream negative("{\"payload_bytes\":-1}\n");
  EXPECT_THROW(FrameReader(negative, "s").next(), dfi::FormatError);
}

// Bytes arrive in arbitrary pieces from a pipe; the decoder must give the same frames as the
// blocking reader, whatever the split.
TEST(FrameDecoder, AnySplitOfTheStreamGivesTheSameFrames) {
  std::stringstream wire;
  const std::string binary("\n\0\xff{}\n", 6);
  writeFrame(wire, {{{"type", "hello"}}, ""});
  writeFrame(wire, {{{"type", "tile"}, {"n", 1}}, binary});
  writeFrame(wire, {{{"type", "done"}}, ""});
  const std::string bytes = wire.str();
  for (std::size_t piece : {1u, 2u, 3u, 7u, 1000u}) {
    FrameDecoder decoder("engine");
    std::vector<Frame> frames;
    for (std::size_t i = 0; i < bytes.size(); i += piece) {
      decoder.feed(std::string_view(bytes).substr(i, piece));
      while (auto f = decoder.next()) frames.push_back(*f);
    }
    ASSERT_EQ(frames.size(), 3u) << "piece " << piece;
    EXPECT_EQ(frames[1].payload, binary);
    EXPECT_EQ(frames[1].header["n"], 1);
    EXPECT_FALSE(frames[1].header.contains("payload_bytes"));
    EXPECT_EQ(frames[2].header["type"], "done");
    EXPECT_TRUE(decoder.idle());
  }
}

TEST(FrameDecoder, WaitsForAPayloadAndRejectsGarbage) {
  FrameDecoder decoder("engine");
  decoder.feed("{\"payload_bytes\":4}\nab");
  EXPECT_FALSE(decoder.next());
  EXPECT_FALSE(decoder.idle());
  decoder.feed("cd");
  auto frame = decoder.next();
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->payload, "abcd");
  decoder.feed("[1,2]\n");
  EXPECT_THROW(decoder.next(), dfi::FormatError);
}
