#pragma once
// JSON for any type with a FieldTable (dfi/base/field_table.h): every field under its table
// name, so records, messages and exports are encoded and decoded by one codec and a renamed field is a
// compile-time change in one table. Decoding names the stream, the type and the field of any
// mismatch (missing, wrong type, an integer out of range, an unknown enum name) in a
// dfi::FormatError; it never lets a nlohmann exception escape.
//
// Values: bool, integers (range-checked), double, std::string (binary ones as lowercase hex),
// std::vector<T>, std::optional<T> (null or absent when empty), enums with EnumNames (by name)
// and nested types with a FieldTable (as objects).

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dfi/base/error.h"
#include "dfi/base/field_table.h"

namespace dfi {

namespace json_detail {

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

std::string toHex(std::string_view bytes);
// nullopt unless `hex` is lowercase hex digits in pairs.
std::optional<std::string> fromHex(std::string_view hex);

// Where a value is being read: the stream and the path of the field ("step.draft_tokens[3]"),
// as a chain of parents so that nothing is built unless a value is wrong.
struct Path {
  std::string_view stream;
  const Path* parent = nullptr;
  std::string_view name;                         // a type or a field
  std::size_t index = static_cast<std::size_t>(-1);  // or an array element

  Path field(std::string_view fieldName) const { return {stream, this, fieldName}; }
  Path element(std::size_t i) const { return {stream, this, {}, i}; }
  std::string item() const;
  [[noreturn]] void fail(const std::string& why) const;
};

template <typename T>
nlohmann::json encodeValue(const T& value, bool binary);

template <typename T>
void decodeValue(const nlohmann::json& j, T& value, bool binary, const Path& path);

template <typename F>
concept HasCodec = requires { typename F::FieldCodec; };

template <HasFieldTable T>
nlohmann::json encodeObject(const T& value) {
  nlohmann::json object = nlohmann::json::object();
  forEachField<T>([&](const auto& f) {
    using F = std::decay_t<decltype(f)>;
    using V = FieldValue<F, T>;
    const V& v = f.get(value);
    if constexpr (HasCodec<F>) {
      const auto wire = F::FieldCodec::encode(v);
      if constexpr (IsOptional<std::decay_t<decltype(wire)>>::value)
        if (!wire) return;
      object[std::string(f.name)] = encodeValue(wire, f.traits.binary);
    } else {
      if constexpr (IsOptional<V>::value)
        if (!v) return;  // an empty optional is left out
      object[std::string(f.name)] = encodeValue(v, f.traits.binary);
    }
  });
  return object;
}

// `lenient`: every field may be missing (and keeps the default), as a recorded copy of a type
// that older writers wrote with fewer fields.
template <HasFieldTable T>
void decodeObject(const nlohmann::json& j, T& value, const Path& path, bool lenient = false) {
  if (!j.is_object()) path.fail("expected an object");
  forEachField<T>([&](const auto& f) {
    using F = std::decay_t<decltype(f)>;
    using V = FieldValue<F, T>;
    const Path inner = path.field(f.name);
    const auto it = j.find(std::string(f.name));
    if constexpr (HasCodec<F>) {
      using C = typename F::FieldCodec;
      using W = typename C::Wire;
      if (it == j.end() || (IsOptional<W>::value && it->is_null())) {
        if (!lenient && !f.traits.optional && !IsOptional<W>::value) inner.fail("missing");
        return;
      }
      W wire{};
      decodeValue(*it, wire, f.traits.binary, inner);
      // A codec may read a value together with what earlier fields set (a legacy key).
      auto decoded = [&] {
        if constexpr (requires { C::decode(wire, f.get(value)); })
          return C::decode(wire, f.get(value));
        else
          return C::decode(wire);
      }();
      if (!decoded) inner.fail("invalid value " + it->dump() + " (" + std::string(C::expected) + ")");
      f.get(value) = std::move(*decoded);
    } else {
      if (it == j.end() || (IsOptional<V>::value && it->is_null())) {
        if (!lenient && !f.traits.optional && !IsOptional<V>::value) inner.fail("missing");
        return;
      }
      decodeValue(*it, f.get(value), f.traits.binary, inner);
    }
  });
}

template <typename T>
nlohmann::json encodeValue(const T& value, bool binary) {
  if constexpr (IsOptional<T>::value) {
    return value ? encodeValue(*value, binary) : nlohmann::json(nullptr);
  } else if constexpr (IsVector<T>::value) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& element : value) array.push_back(encodeValue(element, binary));
    return array;
  } else if constexpr (NamedEnum<T>) {
    return std::string(enumName(value));
  } else if constexpr (HasFieldTable<T>) {
    return encodeObject(value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return binary ? toHex(value) : value;
  } else {
    return value;
  }
}

template <typename T>
void decodeValue(const nlohmann::json& j, T& value, bool binary, const Path& path) {
  if constexpr (IsOptional<T>::value) {
    typename T::value_type inner{};
    decodeValue(j, inner, binary, path);
    value = std::move(inner);
  } else if constexpr (IsVector<T>::value) {
    if (!j.is_array()) path.fail("expected an array");
    value.clear();
    value.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      typename T::value_type element{};
      decodeValue(j[i], element, binary, path.element(i));
      value.push_back(std::move(element));
    }
  } else if constexpr (NamedEnum<T>) {
    if (!j.is_string()) path.fail("expected a name (" + enumNameList<T>() + ")");
    const auto parsed = parseEnum<T>(j.get_ref<const std::string&>());
    if (!parsed) path.fail("unknown value '" + j.get<std::string>() + "' (" + enumNameList<T>() + ")");
    value = *parsed;
  } else if constexpr (HasFieldTable<T>) {
    decodeObject(j, value, path);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) path.fail("expected a string");
    if (!binary) {
      value = j.get<std::string>();
    } else {
      auto bytes = fromHex(j.get_ref<const std::string&>());
      if (!bytes) path.fail("expected lowercase hex bytes");
      value = std::move(*bytes);
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) path.fail("expected true or false");
    value = j.get<bool>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) path.fail("expected a number");
    value = j.get<T>();
  } else {
    static_assert(std::is_integral_v<T>, "no JSON codec for this field type");
    if (!j.is_number_integer()) path.fail("expected an integer");
    const bool fits = j.is_number_unsigned() ? std::in_range<T>(j.get<std::uint64_t>())
                                             : std::in_range<T>(j.get<std::int64_t>());
    if (!fits) path.fail("integer " + j.dump() + " is out of range");
    value = j.is_number_unsigned() ? static_cast<T>(j.get<std::uint64_t>()) : static_cast<T>(j.get<std::int64_t>());
  }
}

}  // namespace json_detail

// Every field of `value` under its table name.
template <HasFieldTable T>
nlohmann::json toJson(const T& value) {
  return json_detail::encodeObject(value);
}

// Reads a T from a JSON object; errors name `stream`, the type (its table's name) and the field.
// `lenient`: any field may be missing and keeps T's default (a recorded copy that an older
// writer wrote with fewer fields); a field present with a wrong value still fails.
template <HasFieldTable T>
T fromJson(const nlohmann::json& object, std::string_view stream, bool lenient = false) {
  T value{};
  json_detail::decodeObject(object, value, json_detail::Path{stream, nullptr, FieldTable<T>::name}, lenient);
  return value;
}

}  // namespace dfi
