// The writer: round trip through the reader, layout and alignment, atomic replacement, and
// the errors it must raise (bad input: UsageError; failing disk: IoError naming the file).

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <numeric>

#include "dfi/base/error.h"
#include "dfi/tensorfile/safetensors_file.h"
#include "dfi/tensorfile/safetensors_writer.h"
#include "tensorfile_test_support.h"

namespace dfi::tensorfile {
namespace {

using testing::catchError;
using testing::ScratchDir;

std::vector<std::byte> pattern(std::size_t size, unsigned seed) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = std::byte((i * 131 + seed * 17 + 7) & 0xFF);
  return bytes;
}

TEST(SafetensorsWriter, EveryDtypeRoundTripsAlignedToItsElementSize) {
  ScratchDir dir;
  const auto file = dir / "all.safetensors";
  const DType dtypes[] = {DType::Bool, DType::U8,  DType::I8,      DType::I16,    DType::I32,  DType::I64,
                          DType::F16,  DType::BF16, DType::F32, DType::F64, DType::F8_E4M3, DType::F8_E5M2};
  SafetensorsWriter writer(file);
  for (unsigned i = 0; i < std::size(dtypes); ++i) {
    const std::vector<std::int64_t> shape{3, std::int64_t(i % 3 + 1)};
    writer.add(std::string(dtypeName(dtypes[i])), dtypes[i], shape, pattern(shape[0] * shape[1] * dtypeSize(dtypes[i]), i));
  }
  writer.add("scalar", DType::F32, {}, pattern(4, 99));
  writer.add("empty", DType::BF16, {0, 4}, {});
  writer.setMetadata("format", "pt");
  writer.finish();

  const auto read = SafetensorsFile::open(file);
  EXPECT_EQ(read.metadata().at("format"), "pt");
  EXPECT_EQ(read.rawHeader().size() % 8, 0u);
  ASSERT_EQ(read.tensors().size(), std::size(dtypes) + 2);
  for (unsigned i = 0; i < std::size(dtypes); ++i) {
    const auto view = read.view(dtypeName(dtypes[i]));
    EXPECT_EQ(view.info().dtype, dtypes[i]);
    EXPECT_EQ(view.info().shape, (std::vector<std::int64_t>{3, std::int64_t(i % 3 + 1)}));
    const auto expected = pattern(view.info().byteSize, i);
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), view.bytes().begin(), view.bytes().end()))
        << dtypeName(dtypes[i]);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(view.data()) % dtypeSize(dtypes[i]), 0u) << dtypeName(dtypes[i]);
  }
  EXPECT_TRUE(read.view("scalar").info().shape.empty());
  EXPECT_EQ(read.view("empty").bytes().size(), 0u);
}

TEST(SafetensorsWriter, ReplacesAnExistingFileAndLeavesNoTemporaries) {
  ScratchDir dir;
  const auto file = dir / "w.safetensors";
  for (int generation = 0; generation < 2; ++generation) {
    SafetensorsWriter writer(file);
    writer.add("g" + std::to_string(generation), DType::U8, {1}, pattern(1, 0));
    writer.finish();
  }
  EXPECT_NE(SafetensorsFile::open(file).find("g1"), nullptr);
  EXPECT_EQ(SafetensorsFile::open(file).find("g0"), nullptr);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(SafetensorsWriter, RefusesInconsistentInput) {
  ScratchDir dir;
  SafetensorsWriter writer(dir / "u.safetensors");
  auto expectUsage = [&](auto&& action, const std::string& item) {
    const auto error = catchError<UsageError>(action);
    EXPECT_EQ(error.context().file, (dir / "u.safetensors").string());
    EXPECT_EQ(error.context().item, item) << error.what();
  };
  expectUsage([&] { writer.add("short", DType::F32, {2}, pattern(7, 0)); }, "short");
  expectUsage([&] { writer.add("__metadata__", DType::U8, {1}, pattern(1, 0)); }, "__metadata__");
  expectUsage([&] { writer.add("neg", DType::U8, {-1}, {}); }, "neg");
  expectUsage([&] { writer.add("bad\xC3", DType::U8, {1}, pattern(1, 0)); }, "bad\xC3");
  expectUsage([&] { writer.setMetadata("k", "\xFF"); }, "\xFF");
  writer.add("ok", DType::U8, {1}, pattern(1, 0));
  expectUsage([&] { writer.add("ok", DType::U8, {1}, pattern(1, 0)); }, "ok");
  writer.finish();
  EXPECT_THROW(writer.finish(), UsageError);
  EXPECT_THROW(writer.add("late", DType::U8, {1}, pattern(1, 0)), UsageError);
}

TEST(SafetensorsWriter, UnwritableDirectoryIsAnIoErrorNamingTheFile) {
  ScratchDir dir;
  const auto file = dir / "missing" / "x.safetensors";
  SafetensorsWriter writer(file);
  const auto error = catchError<IoError>([&] { writer.finish(); });
  EXPECT_EQ(error.context().file, file.string());
}

// A full disk, simulated with a file-size limit: write() fails with EFBIG instead of ENOSPC,
// through the same path. The target keeps its old contents.
TEST(SafetensorsWriter, FailedWriteIsAnIoErrorAndKeepsTheOldFile) {
  ScratchDir dir;
  const auto file = dir / "big.safetensors";
  {
    SafetensorsWriter small(file);
    small.add("old", DType::U8, {1}, pattern(1, 0));
    small.finish();
  }
  rlimit previous{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &previous), 0);
  auto* previousHandler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = previous;
  limited.rlim_cur = 64 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  SafetensorsWriter writer(file);
  writer.add("big", DType::U8, {1 << 20}, pattern(1 << 20, 1));
  const auto error = catchError<IoError>([&] { writer.finish(); });
  ::setrlimit(RLIMIT_FSIZE, &previous);
  ::signal(SIGXFSZ, previousHandler);
  EXPECT_EQ(error.context().file, file.string());
  EXPECT_EQ(error.context().byteOffset, 64u * 1024) << error.what();
  EXPECT_NE(SafetensorsFile::open(file).find("old"), nullptr);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

}  // namespace
}  // namespace dfi::tensorfile
