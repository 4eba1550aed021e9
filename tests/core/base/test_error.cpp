#include <gtest/gtest.h>

#include "dfi/base/error.h"
#include "dfi/base/log.h"

TEST(Error, MessageNamesFileItemAndOffset) {
  const dfi::FormatError e("offsets overlap", {.file = "model.safetensors",
                                               .item = "tensor 'lm_head.weight'",
                                               .byteOffset = 4096});
  EXPECT_STREQ(e.what(), "model.safetensors: tensor 'lm_head.weight': at byte 4096: offsets overlap");
  EXPECT_EQ(e.message(), "offsets overlap");
  EXPECT_EQ(e.context().byteOffset, 4096u);
}

TEST(Error, LeavesOutUnknownParts) {
  EXPECT_STREQ(dfi::IoError("disk full", {.file = "run.dfi"}).what(), "run.dfi: disk full");
  EXPECT_STREQ(dfi::UsageError("bad flag").what(), "bad flag");
}

TEST(Error, SubclassesHaveDistinctExitCodes) {
  const std::vector<int> codes{dfi::Error("x").exitCode(), dfi::IoError("x").exitCode(),
                               dfi::FormatError("x").exitCode(), dfi::ValidationError("x").exitCode(),
                               dfi::UsageError("x").exitCode(), dfi::CancelledError("x").exitCode()};
  for (size_t i = 0; i < codes.size(); ++i)
    for (size_t j = i + 1; j < codes.size(); ++j) EXPECT_NE(codes[i], codes[j]);
}

TEST(Log, NamedLoggersAreSharedAndDistinct) {
  auto a = dfi::logger("tensorfile");
  EXPECT_EQ(a, dfi::logger("tensorfile"));
  EXPECT_NE(a, dfi::logger("session"));
  EXPECT_EQ(a->name(), "tensorfile");
}
