// SafetensorsFile and MappedFile on real files: lookups, file-level errors (missing, not a
// regular file, empty, truncated) and page residency (lazy at open, released on request).

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <numeric>

#include "dfi/base/error.h"
#include "dfi/tensorfile/checkpoint.h"
#include "dfi/tensorfile/safetensors_file.h"
#include "dfi/tensorfile/safetensors_writer.h"
#include "tensorfile_test_support.h"

namespace dfi::tensorfile {
namespace {

using testing::catchError;
using testing::ScratchDir;

void writeTensors(const std::filesystem::path& file, const std::vector<std::pair<std::string, std::size_t>>& sizes) {
  SafetensorsWriter writer(file);
  for (const auto& [name, size] : sizes) {
    std::vector<std::byte> data(size);
    for (std::size_t i = 0; i < size; ++i) data[i] = std::byte((i * 7 + name.size()) & 0xFF);
    writer.add(name, DType::U8, {std::int64_t(size)}, data);
  }
  writer.finish();
}

TEST(SafetensorsFile, FindsTensorsAndKeepsTheRawHeader) {
  ScratchDir dir;
  writeTensors(dir / "f.safetensors", {{"a", 3}, {"bb", 5}});
  const auto file = SafetensorsFile::open(dir / "f.safetensors");
  EXPECT_EQ(file.path(), dir / "f.safetensors");
  ASSERT_NE(file.find("bb"), nullptr);
  EXPECT_EQ(file.find("c"), nullptr);
  const auto view = file.view("bb");
  EXPECT_EQ(view.bytes().size(), 5u);
  EXPECT_EQ(view.bytes()[1], std::byte(9));
  const auto header = parseSafetensorsHeader(file.fileBytes(), file.path());
  EXPECT_EQ(file.rawHeader().size(), header.dataStart());
  const auto error = catchError<ValidationError>([&] { file.view("c"); });
  EXPECT_EQ(error.context().file, (dir / "f.safetensors").string());
  EXPECT_EQ(error.context().item, "c");
}

TEST(SafetensorsFile, FileLevelErrorsNameTheFile) {
  ScratchDir dir;
  const auto missing = catchError<IoError>([&] { SafetensorsFile::open(dir / "missing.safetensors"); });
  EXPECT_EQ(missing.context().file, (dir / "missing.safetensors").string());
  EXPECT_THROW(SafetensorsFile::open(dir.path()), IoError);

  testing::writeFile(dir / "empty.safetensors", "");
  const auto empty = catchError<FormatError>([&] { SafetensorsFile::open(dir / "empty.safetensors"); });
  EXPECT_EQ(empty.context().file, (dir / "empty.safetensors").string());
  EXPECT_EQ(empty.context().byteOffset, 0u);
}

TEST(SafetensorsFile, TruncatedFileNamesTheTensorThatRunsPastTheEnd) {
  ScratchDir dir;
  const auto path = dir / "t.safetensors";
  writeTensors(path, {{"first", 16}, {"last", 16}});
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto error = catchError<FormatError>([&] { SafetensorsFile::open(path); });
  EXPECT_EQ(error.context().file, path.string());
  EXPECT_EQ(error.context().item, "last");
  EXPECT_EQ(error.context().byteOffset, bytes.find("\"last\"")) << "the header entry holding the offsets";
}

TEST(MappedFile, OpeningTouchesOnlyHeaderPagesAndReleaseDropsTensorPages) {
  ScratchDir dir;
  constexpr std::size_t kBig = 8 << 20;
  writeTensors(dir / "model.safetensors", {{"big", kBig}, {"small", 10}});
  const auto checkpoint = Checkpoint::open(dir.path());
  const auto& mapping = checkpoint.shards()[0].mapping();
  EXPECT_LE(mapping.residentBytes(), 64u * 1024) << "opening must not read tensor data";

  const auto view = checkpoint.tensor("big");
  const auto sum = [&] {
    return std::accumulate(view.bytes().begin(), view.bytes().end(), std::uint64_t(0),
                           [](std::uint64_t total, std::byte b) { return total + std::to_integer<unsigned>(b); });
  };
  const auto expected = sum();
  EXPECT_GE(mapping.residentBytes(), kBig);
  checkpoint.releasePages("big");
  EXPECT_LE(mapping.residentBytes(), 64u * 1024);
  EXPECT_EQ(sum(), expected) << "released pages must read back from the file";
}

}  // namespace
}  // namespace dfi::tensorfile
