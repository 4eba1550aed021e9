// Every validation rule of the header parser, on hand-built bytes; each error must name the
// file, the tensor or field, and the byte offset of the problem.

#include <gtest/gtest.h>

#include "dfi/base/error.h"
#include "dfi/tensorfile/safetensors_header.h"
#include "tensorfile_test_support.h"

namespace dfi::tensorfile {
namespace {

using testing::asBytes;
using testing::catchError;
using testing::safetensorsBytes;

const std::string kFile = "bad.safetensors";

SafetensorsHeader parse(const std::string& bytes) { return parseSafetensorsHeader(asBytes(bytes), kFile); }

FormatError parseError(const std::string& bytes) {
  return catchError<FormatError>([&] { parse(bytes); });
}

// Absolute offset of `needle` inside the JSON of a file built by safetensorsBytes(json, ...).
std::uint64_t at(std::string_view json, std::string_view needle) {
  const auto found = json.find(needle);
  EXPECT_NE(found, std::string_view::npos) << needle;
  return kHeaderLengthBytes + found;
}

void expectWhere(const FormatError& error, const std::string& item, std::uint64_t offset) {
  EXPECT_EQ(error.context().file, kFile) << error.what();
  EXPECT_EQ(error.context().item, item) << error.what();
  EXPECT_EQ(error.context().byteOffset, offset) << error.what();
  EXPECT_NE(std::string(error.what()).find(kFile), std::string::npos) << error.what();
}

TEST(SafetensorsHeader, ReadsEveryFieldAndOrdersTensorsByOffset) {
  const std::string json =
      R"({"__metadata__":{"format":"pt","note":"ü"},)"
      R"("w":{"dtype":"BF16","shape":[2,3],"data_offsets":[4,16]},)"
      R"("scalar":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
      R"("empty":{"dtype":"I64","shape":[0,5],"data_offsets":[16,16]}})";
  const auto header = parse(safetensorsBytes(json, std::string(16, 'x')));
  EXPECT_EQ(header.jsonLength, json.size());
  EXPECT_EQ(header.dataStart(), 8 + json.size());
  EXPECT_EQ(header.metadata, (std::map<std::string, std::string>{{"format", "pt"}, {"note", "ü"}}));
  ASSERT_EQ(header.tensors.size(), 3u);
  const auto& scalar = header.tensors[0];
  EXPECT_EQ(scalar.name, "scalar");
  EXPECT_EQ(scalar.dtype, DType::F32);
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.fileOffset, header.dataStart());
  const auto& w = header.tensors[1];
  EXPECT_EQ(w.name, "w");
  EXPECT_EQ(w.storedName, "w");
  EXPECT_EQ(w.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(w.byteSize, 12u);
  EXPECT_EQ(w.fileOffset, header.dataStart() + 4);
  EXPECT_EQ(w.file, kFile);
  EXPECT_EQ(header.tensors[2].numel(), 0);
  EXPECT_EQ(header.tensors[2].byteSize, 0u);
}

TEST(SafetensorsHeader, AcceptsAnEmptyHeaderAndLeadingWhitespace) {
  EXPECT_TRUE(parse(safetensorsBytes("{}")).tensors.empty());
  EXPECT_EQ(parse(safetensorsBytes(R"(  {"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "x"))
                .tensors.size(),
            1u);
}

TEST(SafetensorsHeader, FileShorterThanTheLengthPrefix) {
  expectWhere(parseError("abc"), "", 0);
}

TEST(SafetensorsHeader, HeaderLengthOverTheLimit) {
  const auto error = parseError(safetensorsBytes("{}", "", kMaxHeaderBytes + 1));
  expectWhere(error, "", 0);
  EXPECT_NE(error.message().find("exceeds the limit"), std::string::npos);
}

TEST(SafetensorsHeader, HeaderLengthBeyondTheFile) {
  const auto error = parseError(safetensorsBytes("{}", "", 3));
  expectWhere(error, "", 0);
  EXPECT_NE(error.message().find("past the end of the file"), std::string::npos);
}

TEST(SafetensorsHeader, InvalidUtf8) {
  const std::string json = "{\"a\xC3\x28\":1}";  // 0xC3 needs a continuation byte
  expectWhere(parseError(safetensorsBytes(json)), "", at(json, "\xC3"));
  const std::string surrogate = "{\"\xED\xA0\x80\":1}";  // U+D800 encoded
  expectWhere(parseError(safetensorsBytes(surrogate)), "", at(surrogate, "\xED"));
  const std::string overlong = "{\"\xC0\xAF\":1}";
  expectWhere(parseError(safetensorsBytes(overlong)), "", at(overlong, "\xC0"));
}

TEST(SafetensorsHeader, InvalidJson) {
  const std::string json = R"({"a": })";
  const auto error = parseError(safetensorsBytes(json));
  expectWhere(error, "", at(json, "}"));
  EXPECT_NE(error.message().find("invalid JSON"), std::string::npos);
  expectWhere(parseError(safetensorsBytes("")), "", 8);
  const std::string trailing = R"({} x)";
  expectWhere(parseError(safetensorsBytes(trailing)), "", at(trailing, "x"));
}

TEST(SafetensorsHeader, TopLevelMustBeAnObject) {
  const auto error = parseError(safetensorsBytes("[1]"));
  EXPECT_NE(error.message().find("JSON object"), std::string::npos) << error.what();
  EXPECT_EQ(error.context().byteOffset, 8u);
}

TEST(SafetensorsHeader, DuplicateTensorName) {
  const std::string entry = R"({"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  const std::string json = R"({"a":)" + entry + R"(,"b":{},"a":)" + entry + "}";
  const auto error = parseError(safetensorsBytes(json, "x"));
  expectWhere(error, "a", at(json, R"("b":{},"a")") + 7);
  EXPECT_NE(error.message().find("duplicate"), std::string::npos);
}

TEST(SafetensorsHeader, DuplicateFieldInsideAnEntry) {
  const std::string json = R"({"t":{"dtype":"U8","shape":[1],"dtype":"I8","data_offsets":[0,1]}})";
  expectWhere(parseError(safetensorsBytes(json, "x")), "t/dtype", at(json, R"("dtype":"I8")"));
}

TEST(SafetensorsHeader, NestingDeeperThanAHeaderCanBe) {
  const std::string json = R"({"t":{"dtype":"U8","shape":[[1]],"data_offsets":[0,1]}})";
  expectWhere(parseError(safetensorsBytes(json, "x")), "t/shape", at(json, "[[") + 1);
}

struct EntryCase {
  const char* name;
  std::string entry;  // the value of tensor "t"; data is 4 bytes
  const char* message;
};

class BadEntry : public ::testing::TestWithParam<EntryCase> {};

TEST_P(BadEntry, NamesTheTensorAndItsEntry) {
  const std::string json = R"({"ok":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"t":)" + GetParam().entry + "}";
  const auto error = parseError(safetensorsBytes(json, "abcd"));
  expectWhere(error, "t", at(json, R"("t")"));
  EXPECT_NE(error.message().find(GetParam().message), std::string::npos) << error.what();
}

INSTANTIATE_TEST_SUITE_P(
    SafetensorsHeader, BadEntry,
    ::testing::Values(
        EntryCase{"NotAnObject", "[1]", "not a JSON object"},
        EntryCase{"NoDtype", R"({"shape":[4],"data_offsets":[0,4]})", "no \"dtype\""},
        EntryCase{"UnknownDtype", R"({"dtype":"F4","shape":[4],"data_offsets":[0,4]})", "unknown dtype"},
        EntryCase{"DtypeNotAString", R"({"dtype":1,"shape":[4],"data_offsets":[0,4]})", "not a string"},
        EntryCase{"NoShape", R"({"dtype":"U8","data_offsets":[0,4]})", "no \"shape\""},
        EntryCase{"NegativeDimension", R"({"dtype":"U8","shape":[-4],"data_offsets":[0,4]})", "non-negative"},
        EntryCase{"FractionalDimension", R"({"dtype":"U8","shape":[4.0],"data_offsets":[0,4]})", "non-negative"},
        EntryCase{"ShapeOverflows", R"({"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]})",
                  "more elements"},
        EntryCase{"NoOffsets", R"({"dtype":"U8","shape":[4]})", "no \"data_offsets\""},
        EntryCase{"OffsetsNotAPair", R"({"dtype":"U8","shape":[4],"data_offsets":[0,4,4]})", "pair"},
        EntryCase{"NegativeOffset", R"({"dtype":"U8","shape":[4],"data_offsets":[-1,4]})", "pair"},
        EntryCase{"OffsetsReversed", R"({"dtype":"U8","shape":[0],"data_offsets":[4,0]})", "end before"},
        EntryCase{"SizeNotDtypeTimesShape", R"({"dtype":"F16","shape":[4],"data_offsets":[0,4]})",
                  "hold 4 bytes but F16 [4] needs 8"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(SafetensorsHeader, MetadataValuesMustBeStrings) {
  const std::string json = R"({"__metadata__":{"format":"pt","n":1}})";
  const auto error = parseError(safetensorsBytes(json));
  expectWhere(error, "__metadata__", at(json, R"("__metadata__")"));
  EXPECT_NE(error.message().find("\"n\""), std::string::npos) << error.what();
}

TEST(SafetensorsHeader, OffsetsPastTheEndOfTheFile) {
  const std::string json = R"({"t":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})";
  const auto error = parseError(safetensorsBytes(json, "abcd"));
  expectWhere(error, "t", at(json, R"("t")"));
  EXPECT_NE(error.message().find("past the end of the data buffer (4 bytes)"), std::string::npos) << error.what();
}

// Offsets that would wrap around 2^64 when added to the data start must not land in the file.
TEST(SafetensorsHeader, OffsetsThatWouldWrapAround) {
  const std::string json =
      R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
      R"("t":{"dtype":"U8","shape":[4],"data_offsets":[18446744073709551610,18446744073709551614]}})";
  expectWhere(parseError(safetensorsBytes(json, "abcd")), "t", at(json, R"("t")"));
}

TEST(SafetensorsHeader, OverlappingTensors) {
  const std::string json = R"({"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},)"
                           R"("b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})";
  const auto error = parseError(safetensorsBytes(json, "abcd"));
  expectWhere(error, "b", 8 + json.size() + 2);
  EXPECT_NE(error.message().find("overlaps tensor \"a\""), std::string::npos) << error.what();
}

TEST(SafetensorsHeader, EmptyTensorInsideAnotherOverlaps) {
  const std::string json = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                           R"("z":{"dtype":"U8","shape":[0],"data_offsets":[2,2]}})";
  expectWhere(parseError(safetensorsBytes(json, "abcd")), "z", 8 + json.size() + 2);
}

TEST(SafetensorsHeader, BytesThatBelongToNoTensor) {
  const std::string gap = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})";
  expectWhere(parseError(safetensorsBytes(gap, "abcd")), "a", 8 + gap.size());
  const std::string trailing = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})";
  const auto error = parseError(safetensorsBytes(trailing, "abcd"));
  expectWhere(error, "a", 8 + trailing.size() + 2);
  EXPECT_NE(error.message().find("2 bytes after the last tensor"), std::string::npos) << error.what();
}

TEST(SafetensorsHeader, EncodeThenParseRoundTrips) {
  const std::vector<TensorLayout> layouts{
      {"x", DType::F64, {3}}, {"y", DType::Bool, {}}, {"z", DType::BF16, {2, 0}}};
  const auto encoded = encodeSafetensorsHeader(layouts, {{"format", "pt"}});
  EXPECT_EQ(encoded.bytes.size() % 8, 0u);
  EXPECT_EQ(encoded.dataOffsets, (std::vector<std::uint64_t>{0, 24, 25}));
  EXPECT_EQ(encoded.dataSize, 25u);
  const auto header = parse(encoded.bytes + std::string(encoded.dataSize, '\0'));
  ASSERT_EQ(header.tensors.size(), 3u);
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    EXPECT_EQ(header.tensors[i].name, layouts[i].name);
    EXPECT_EQ(header.tensors[i].dtype, layouts[i].dtype);
    EXPECT_EQ(header.tensors[i].shape, layouts[i].shape);
    EXPECT_EQ(header.tensors[i].fileOffset, encoded.bytes.size() + encoded.dataOffsets[i]);
  }
  EXPECT_EQ(header.metadata.at("format"), "pt");
}

TEST(SafetensorsHeader, EncoderRefusesNamesNoReaderCouldUse) {
  auto refuse = [](std::vector<TensorLayout> layouts, const std::string& item) {
    const auto error = catchError<UsageError>([&] { encodeSafetensorsHeader(layouts, {}); });
    EXPECT_EQ(error.context().item, item) << error.what();
  };
  refuse({{"", DType::U8, {1}}}, "");
  refuse({{"__metadata__", DType::U8, {1}}}, "__metadata__");
  refuse({{"a\xFF", DType::U8, {1}}}, "a\xFF");
  refuse({{"a", DType::U8, {1}}, {"a", DType::U8, {1}}}, "a");
  refuse({{"neg", DType::U8, {-1}}}, "neg");
}

}  // namespace
}  // namespace dfi::tensorfile
