// Bit-exact agreement with the reference `safetensors` package, both ways:
// - files Python wrote (tests/oracle/gen_safetensors.py) read here tensor by tensor;
// - files written here, then loaded by tests/oracle/check_cpp_safetensors.py (the ctest
//   safetensors_cpp_files_load_in_python runs after this one).

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dfi/tensorfile/checkpoint.h"
#include "dfi/tensorfile/safetensors_file.h"
#include "dfi/tensorfile/safetensors_writer.h"
#include "dfi/tensorfile/sha256.h"

namespace dfi::tensorfile {
namespace {

using nlohmann::json;

std::filesystem::path oracleDir() {
  const char* dir = std::getenv("DFI_SAFETENSORS_ORACLE");
  return dir ? dir : DFI_BINARY_DIR "/oracle/safetensors";
}

json readJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path << " is missing; run the safetensors_oracle_generate test first";
  return json::parse(in);
}

void expectTensorMatches(const TensorView& view, const json& expected, const std::string& what) {
  EXPECT_EQ(dtypeName(view.info().dtype), expected.at("dtype").get<std::string>()) << what;
  EXPECT_EQ(view.info().shape, expected.at("shape").get<std::vector<std::int64_t>>()) << what;
  EXPECT_EQ(sha256Hex(view.bytes()), expected.at("sha256").get<std::string>()) << what;
}

TEST(SafetensorsOracle, ReadsEveryDtypeBitIdentical) {
  const auto expected = readJson(oracleDir() / "expected.json").at("all_dtypes.safetensors");
  const auto file = SafetensorsFile::open(oracleDir() / "all_dtypes.safetensors");
  using Metadata = std::map<std::string, std::string>;
  EXPECT_EQ(file.metadata(), expected.at("metadata").get<Metadata>());
  ASSERT_EQ(file.tensors().size(), expected.at("tensors").size());
  for (const auto& [name, entry] : expected.at("tensors").items()) expectTensorMatches(file.view(name), entry, name);
}

TEST(SafetensorsOracle, ReadsAShardedQwenCheckpoint) {
  const auto expected = readJson(oracleDir() / "expected.json").at("checkpoint");
  const auto checkpoint = Checkpoint::open(oracleDir() / expected.at("dir").get<std::string>());
  std::vector<std::string> names;
  for (const auto& [name, entry] : expected.at("tensors").items()) names.push_back(name);
  EXPECT_EQ(checkpoint.names(), names);  // both sorted
  for (const auto& [name, entry] : expected.at("tensors").items()) {
    const auto view = checkpoint.tensor(name);
    expectTensorMatches(view, entry, name);
    EXPECT_EQ(view.info().storedName, entry.at("stored").get<std::string>());
    EXPECT_EQ(view.info().file.filename(), entry.at("shard").get<std::string>());
  }
  ASSERT_EQ(checkpoint.shards().size(), expected.at("shards").size());
  EXPECT_EQ(checkpoint.totalBytes(), expected.at("total_bytes").get<std::uint64_t>());
  EXPECT_EQ(checkpoint.headerSha256(), expected.at("header_sha256").get<std::string>());
}

template <class T>
std::vector<std::byte> bytesOf(const std::vector<T>& values) {
  const auto bytes = std::as_bytes(std::span(values));
  return {bytes.begin(), bytes.end()};
}

// Writes tensors and records, for the Python check, what each should read back as.
class RecordingWriter {
 public:
  RecordingWriter(const std::filesystem::path& dir, const std::string& file, json& expected)
      : writer_(dir / file), entry_(expected[file]) {
    entry_["metadata"] = json::object();
    entry_["tensors"] = json::object();
  }
  void add(const std::string& name, DType dtype, std::vector<std::int64_t> shape, const std::vector<std::byte>& data) {
    entry_["tensors"][name] = {{"dtype", dtypeName(dtype)}, {"shape", shape}, {"sha256", sha256Hex(data)}};
    writer_.add(name, dtype, std::move(shape), data);
  }
  void setMetadata(const std::string& key, const std::string& value) {
    entry_["metadata"][key] = value;
    writer_.setMetadata(key, value);
  }
  void finish() { writer_.finish(); }

 private:
  SafetensorsWriter writer_;
  json& entry_;
};

TEST(SafetensorsOracle, WritesFilesTheReferenceLoads) {
  const auto dir = oracleDir() / "cpp_written";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  json expected;

  RecordingWriter known(dir, "known_values.safetensors", expected);
  // Little-endian host: the values' bytes are the file's bytes.
  known.add("f32.arange", DType::F32, {2, 3}, bytesOf(std::vector<float>{0, 0.25, 0.5, 0.75, 1, 1.25}));
  known.add("i64.negative", DType::I64, {5},
            bytesOf(std::vector<std::int64_t>{0, -1'000'000'000'000, -2'000'000'000'000, -3'000'000'000'000,
                                              -4'000'000'000'000}));
  known.add("bf16.halves", DType::BF16, {4}, bytesOf(std::vector<std::uint16_t>{0x3F00, 0xBFC0, 0x4020, 0x477F}));
  known.add("bool.alternating", DType::Bool, {7}, bytesOf(std::vector<std::uint8_t>{1, 0, 1, 0, 1, 0, 1}));
  known.add("f8_e4m3.powers", DType::F8_E4M3, {4}, bytesOf(std::vector<std::uint8_t>{0x38, 0x40, 0x28, 0xFE}));
  known.setMetadata("format", "pt");
  known.setMetadata("written_by", "dfi ✓");
  known.finish();

  RecordingWriter every(dir, "every_dtype.safetensors", expected);
  const DType dtypes[] = {DType::U8,  DType::I8,  DType::I16, DType::I32,     DType::I64,
                          DType::F16, DType::BF16, DType::F32, DType::F64, DType::F8_E4M3, DType::F8_E5M2};
  for (std::size_t i = 0; i < std::size(dtypes); ++i) {
    const std::vector<std::int64_t> shape{std::int64_t(i % 3 + 1), 5};
    std::vector<std::byte> data(shape[0] * shape[1] * dtypeSize(dtypes[i]));
    for (std::size_t b = 0; b < data.size(); ++b) data[b] = std::byte((b * 37 + i * 11 + 3) & 0xFF);
    every.add("t." + std::string(dtypeName(dtypes[i])), dtypes[i], shape, data);
  }
  every.add("rank0.f64", DType::F64, {}, bytesOf(std::vector<double>{-2.75}));
  every.add("zero.f16", DType::F16, {4, 0}, {});
  every.add("名前.weight", DType::I32, {2}, bytesOf(std::vector<std::int32_t>{-7, 7}));
  every.finish();

  std::ofstream(dir / "expected.json") << expected.dump(1);
}

}  // namespace
}  // namespace dfi::tensorfile
