// The generic JSON codec of field tables: every field under its name, round trips, and every
// kind of bad input turned into a FormatError that names the stream and the field path.

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dfi/base/error.h"
#include "dfi/base/field_json.h"

namespace {

enum class Colour { Red, Green };

struct Inner {
  std::int32_t x = 0;
};

struct Sample {
  std::int32_t id = 0;
  std::uint8_t small = 0;
  double ratio = 0;
  bool flag = false;
  std::string text;
  std::string raw;
  std::vector<std::int32_t> ids;
  std::optional<std::int64_t> limit;
  Colour colour = Colour::Red;
  Inner inner;
  std::int32_t extra = 7;
};

}  // namespace

namespace dfi {

template <>
struct EnumNames<Colour> {
  static constexpr std::array<std::pair<Colour, std::string_view>, 2> names{
      {{Colour::Red, "red"}, {Colour::Green, "green"}}};
};

template <>
struct FieldTable<Inner> {
  static constexpr std::string_view name = "inner";
  static constexpr auto fields = std::tuple{field<Inner>("x", &Inner::x, "a number")};
};

template <>
struct FieldTable<Sample> {
  using S = Sample;
  static constexpr std::string_view name = "sample";
  static constexpr auto fields = std::tuple{
      field<S>("id", &S::id, ""),          field<S>("small", &S::small, ""),
      field<S>("ratio", &S::ratio, ""),    field<S>("flag", &S::flag, ""),
      field<S>("text", &S::text, ""),      field<S>("raw", &S::raw, "", {.binary = true}),
      field<S>("ids", &S::ids, ""),        field<S>("limit", &S::limit, ""),
      field<S>("colour", &S::colour, ""),  field<S>("inner", &S::inner, ""),
      field<S>("extra", &S::extra, "", {.optional = true})};
};

namespace {

Sample sample() {
  Sample s;
  s.id = -3;
  s.small = 200;
  s.ratio = 0.25;
  s.flag = true;
  s.text = "caf\xc3\xa9";
  s.raw = std::string("\xe2\x80", 2);  // half a UTF-8 sequence: travels as hex
  s.ids = {1, 2, 3};
  s.limit = 9;
  s.colour = Colour::Green;
  s.inner.x = 4;
  return s;
}

TEST(FieldJson, RoundTripsEveryKindOfField) {
  const nlohmann::json j = toJson(sample());
  EXPECT_EQ(j["raw"], "e280");
  EXPECT_EQ(j["colour"], "green");
  EXPECT_EQ(j["inner"]["x"], 4);
  const Sample back = fromJson<Sample>(j, "test");
  EXPECT_EQ(back.raw, sample().raw);
  EXPECT_EQ(back.ids, sample().ids);
  EXPECT_EQ(back.limit, 9);
  EXPECT_EQ(back.colour, Colour::Green);
  EXPECT_EQ(back.small, 200);
}

TEST(FieldJson, OptionalFieldsMayBeAbsent) {
  nlohmann::json j = toJson(sample());
  j.erase("extra");
  j.erase("limit");
  const Sample back = fromJson<Sample>(j, "test");
  EXPECT_EQ(back.extra, 7);
  EXPECT_FALSE(back.limit);
}

// Each bad value: the error names the stream and the path to the value.
void expectError(const std::string& key, const nlohmann::json& value, const std::string& item) {
  nlohmann::json j = toJson(sample());
  if (value.is_discarded()) j.erase(key);
  else j[key] = value;
  try {
    fromJson<Sample>(j, "stream");
    ADD_FAILURE() << key << " = " << value.dump() << " was accepted";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.context().file, "stream");
    EXPECT_EQ(e.context().item, item) << e.what();
  }
}

TEST(FieldJson, BadValuesNameTheirField) {
  expectError("id", nlohmann::json::value_t::discarded, "sample.id");  // missing
  expectError("id", "x", "sample.id");                                 // wrong type
  expectError("id", 1.5, "sample.id");                                 // not an integer
  expectError("id", 4294967296LL, "sample.id");                        // beyond 32 bits
  expectError("small", 256, "sample.small");                           // beyond 8 bits
  expectError("small", -1, "sample.small");
  expectError("flag", 1, "sample.flag");
  expectError("raw", "e2z0", "sample.raw");                             // not hex
  expectError("ids", nlohmann::json::array({1, "two"}), "sample.ids[1]");
  expectError("ids", 3, "sample.ids");
  expectError("colour", "blue", "sample.colour");
  expectError("inner", nlohmann::json::object(), "sample.inner.x");
  expectError("inner", 5, "sample.inner");
  EXPECT_THROW(fromJson<Sample>(nlohmann::json::array(), "stream"), FormatError);
}

}  // namespace
}  // namespace dfi
