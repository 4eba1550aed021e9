// Stored elements read as doubles: every dtype's bit patterns, including subnormals,
// infinities and NaN, and the range check on a view.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "dfi/base/error.h"
#include "dfi/tensorfile/element_values.h"
#include "dfi/tensorfile/safetensors_file.h"
#include "dfi/tensorfile/safetensors_writer.h"
#include "tensorfile_test_support.h"

namespace dfi::tensorfile {
namespace {

template <class T>
std::vector<std::byte> bytesOf(const std::vector<T>& values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

TEST(ElementValues, HalfBitPatterns) {
  EXPECT_EQ(halfToDouble(0x3C00), 1.0);
  EXPECT_EQ(halfToDouble(0xC100), -2.5);
  EXPECT_EQ(halfToDouble(0x7BFF), 65504.0);
  EXPECT_EQ(halfToDouble(0x0001), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(halfToDouble(0x8000), 0.0);
  EXPECT_TRUE(std::signbit(halfToDouble(0x8000)));
  EXPECT_EQ(halfToDouble(0x7C00), std::numeric_limits<double>::infinity());
  EXPECT_EQ(halfToDouble(0xFC00), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(halfToDouble(0x7E00)));
}

TEST(ElementValues, BFloat16IsTheHighHalfOfAFloat) {
  EXPECT_EQ(bfloat16ToDouble(0x3F80), 1.0);
  EXPECT_EQ(bfloat16ToDouble(0xC020), -2.5);
  EXPECT_EQ(bfloat16ToDouble(0x3F81), 1.0 + std::ldexp(1.0, -7));
  EXPECT_EQ(bfloat16ToDouble(0x7F80), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(bfloat16ToDouble(0x7FC0)));
}

TEST(ElementValues, Float8Formats) {
  EXPECT_EQ(float8E4M3ToDouble(0x38), 1.0);
  EXPECT_EQ(float8E4M3ToDouble(0x7E), 448.0);  // the largest: E4M3fn has no infinity
  EXPECT_EQ(float8E4M3ToDouble(0x01), std::ldexp(1.0, -9));
  EXPECT_TRUE(std::isnan(float8E4M3ToDouble(0x7F)));
  EXPECT_TRUE(std::isnan(float8E4M3ToDouble(0xFF)));
  EXPECT_EQ(float8E5M2ToDouble(0x3C), 1.0);
  EXPECT_EQ(float8E5M2ToDouble(0x7B), 57344.0);
  EXPECT_EQ(float8E5M2ToDouble(0x7C), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(float8E5M2ToDouble(0x7D)));
}

TEST(ElementValues, EveryDtypeFromAnUnalignedBuffer) {
  std::vector<double> out(3);
  auto check = [&](DType dtype, std::vector<std::byte> data, std::vector<double> expected) {
    data.insert(data.begin(), std::byte{0xAB});  // one byte of offset: no alignment assumed
    readElements(dtype, std::span(data).subspan(1), 0, out);
    EXPECT_EQ(out, expected) << dtypeName(dtype);
  };
  check(DType::F32, bytesOf<float>({1.5f, -2.0f, 0.25f}), {1.5, -2.0, 0.25});
  check(DType::F64, bytesOf<double>({1e-300, -2.0, 3.0}), {1e-300, -2.0, 3.0});
  check(DType::F16, bytesOf<std::uint16_t>({0x3C00, 0xC100, 0x3800}), {1.0, -2.5, 0.5});
  check(DType::BF16, bytesOf<std::uint16_t>({0x3F80, 0xC020, 0x3F00}), {1.0, -2.5, 0.5});
  check(DType::I64, bytesOf<std::int64_t>({-7, 0, 151936}), {-7, 0, 151936});
  check(DType::I32, bytesOf<std::int32_t>({-7, 0, 42}), {-7, 0, 42});
  check(DType::I16, bytesOf<std::int16_t>({-7, 0, 42}), {-7, 0, 42});
  check(DType::I8, bytesOf<std::int8_t>({-7, 0, 42}), {-7, 0, 42});
  check(DType::U8, bytesOf<std::uint8_t>({255, 0, 42}), {255, 0, 42});
  check(DType::Bool, bytesOf<std::uint8_t>({1, 0, 1}), {1, 0, 1});
  check(DType::F8_E4M3, bytesOf<std::uint8_t>({0x38, 0xB8, 0x00}), {1.0, -1.0, 0.0});
  check(DType::F8_E5M2, bytesOf<std::uint8_t>({0x3C, 0xBC, 0x00}), {1.0, -1.0, 0.0});
}

TEST(ElementValues, ViewRangeIsCheckedAndNamesTheTensor) {
  testing::ScratchDir dir;
  SafetensorsWriter writer(dir / "t.safetensors");
  writer.add("x", DType::BF16, {2, 2}, bytesOf<std::uint16_t>({0x3F80, 0x4000, 0x4040, 0x4080}));
  writer.finish();
  const auto file = SafetensorsFile::open(dir / "t.safetensors");
  std::vector<double> out(2);
  readElements(file.view("x"), 2, out);
  EXPECT_EQ(out, (std::vector<double>{3.0, 4.0}));
  const auto error = testing::catchError<UsageError>([&] { readElements(file.view("x"), 3, out); });
  EXPECT_EQ(error.context().item, "x");
  EXPECT_NE(error.context().file.find("t.safetensors"), std::string::npos);
}

}  // namespace
}  // namespace dfi::tensorfile
