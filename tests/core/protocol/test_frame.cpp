#include <gtest/gtest.h>

#include <sstream>

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

TEST(Frame, OversizedOrNegativeLengthIsRejected) {
  std::stringstream huge("{\"payload_bytes\":99999999999}\n");
  EXPECT_THROW(FrameReader(huge, "s").next(), dfi::FormatError);
  std::stringstream negative("{\"payload_bytes\":-1}\n");
  EXPECT_THROW(FrameReader(negative, "s").next(), dfi::FormatError);
}
