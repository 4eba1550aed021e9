#include <gtest/gtest.h>

#include "dfi/tensorfile/dtype.h"

using namespace dfi::tensorfile;

TEST(DType, EveryCheckpointDTypeRoundTrips) {
  const std::pair<const char*, std::size_t> expected[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"I16", 2},      {"I32", 4},      {"I64", 8},
      {"F16", 2},  {"BF16", 2}, {"F32", 4}, {"F64", 8}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  for (auto [name, size] : expected) {
    auto dtype = parseDType(name);
    ASSERT_TRUE(dtype) << name;
    EXPECT_EQ(dtypeName(*dtype), name);
    EXPECT_EQ(dtypeSize(*dtype), size) << name;
  }
}

TEST(DType, UnknownNamesAreRejected) {
  EXPECT_FALSE(parseDType("bf16"));
  EXPECT_FALSE(parseDType("F4"));
  EXPECT_FALSE(parseDType(""));
}
