#pragma once
// A type's fields described once, as a table of (name, accessor, unit, optional, doc), so
// that every codec of it (the stream's JSON, the session file's SQL columns, the CSV/JSON
// export, the schema documentation) is generated from the same list and a field's name is
// written in exactly one place. A new field is one line in its type's table.
//
//   template <> struct FieldTable<StepRecord> {
//     static constexpr std::string_view name = "step";
//     static constexpr auto fields = std::tuple{
//         field<StepRecord>("step_id", &StepRecord::stepId, "unique in a file"),
//         field<StepRecord>("target_path", [](auto& r) -> auto& { return r.target.path; }, "...")};
//   };
//
// Enums are written by name wherever text is written; EnumNames<E> lists them once.

#include <array>
#include <string>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace dfi {

struct FieldTraits {
  std::string_view unit = {};  // "tokens", "s", ... ; empty when the value has none
  bool optional = false;       // a reader accepts it missing (and keeps the default)
  bool binary = false;         // a string of raw bytes (not always UTF-8): BLOB in files, hex in JSON
  bool bulky = false;          // too wide for a CSV row (config files, top-k tables): JSON exports only
  bool jsonText = false;       // text holding a JSON document: embedded as JSON in JSON exports
};

template <typename Record, typename Access>
struct Field {
  std::string_view name;
  Access access;  // a callable returning the value's reference for a const or mutable Record
  std::string_view doc;
  FieldTraits traits;

  decltype(auto) get(Record& record) const { return access(record); }
  decltype(auto) get(const Record& record) const { return access(record); }
};

// A field that is one data member.
template <typename Record, typename Value>
constexpr auto field(std::string_view name, Value Record::*member, std::string_view doc, FieldTraits traits = {}) {
  // A member pointer is not a structural type of every compiler's liking as a lambda capture
  // in a constant expression, so the accessor stores it in a small callable instead.
  struct Member {
    Value Record::*member;
    constexpr Value& operator()(Record& r) const { return r.*member; }
    constexpr const Value& operator()(const Record& r) const { return r.*member; }
  };
  return Field<Record, Member>{name, Member{member}, doc, traits};
}

// A field reached through an accessor (a member of a member): `access` takes `auto&`.
template <typename Record, typename Access>
  requires std::is_invocable_v<const Access&, Record&>
constexpr auto field(std::string_view name, Access access, std::string_view doc, FieldTraits traits = {}) {
  return Field<Record, Access>{name, access, doc, traits};
}

// A field kept as one type and written as another (a path as text, an anchor selection as
// "every:4", a negated flag): Codec has `using Wire` (a type the codecs write: string, bool,
// vectors of them, optionals), `static Wire encode(const Value&)`, `static
// std::optional<Value> decode(const Wire&)` (nullopt: not a valid spelling; or decode(wire,
// current) to combine with what an earlier field set) and `expected`, the valid spellings for
// an error message. An encode that returns an empty optional writes nothing (a key that is
// only read). Only the JSON codec (field_json.h) reads codecs.
template <typename Record, typename Access, typename Codec>
struct CodedField : Field<Record, Access> {
  using FieldCodec = Codec;
};

template <typename Codec, typename Record, typename Value>
constexpr auto codedField(std::string_view name, Value Record::*member, std::string_view doc, FieldTraits traits = {}) {
  const auto plain = field<Record>(name, member, doc, traits);
  return CodedField<Record, decltype(plain.access), Codec>{plain};
}

template <typename Codec, typename Record, typename Access>
  requires std::is_invocable_v<const Access&, Record&>
constexpr auto codedField(std::string_view name, Access access, std::string_view doc, FieldTraits traits = {}) {
  return CodedField<Record, Access, Codec>{{name, access, doc, traits}};
}

// The fields of a table whose record is a member of `Outer` (`Outer::*member`), as fields of
// Outer: a nested type's keys written next to the outer type's, not as an object.
template <typename Outer, typename Inner, typename InnerField>
struct MemberAccess {
  Inner Outer::*member;
  InnerField inner;
  constexpr decltype(auto) operator()(Outer& o) const { return inner.get(o.*member); }
  constexpr decltype(auto) operator()(const Outer& o) const { return inner.get(o.*member); }
};

template <typename Outer, typename Inner, typename Fields>
constexpr auto fieldsThrough(Inner Outer::*member, const Fields& fields) {
  return std::apply(
      [&](const auto&... f) {
        auto one = [&](const auto& inner) {
          using F = std::remove_cvref_t<decltype(inner)>;
          using Access = MemberAccess<Outer, Inner, F>;
          if constexpr (requires { typename F::FieldCodec; })
            return CodedField<Outer, Access, typename F::FieldCodec>{{inner.name, Access{member, inner}, inner.doc, inner.traits}};
          else
            return Field<Outer, Access>{inner.name, Access{member, inner}, inner.doc, inner.traits};
        };
        return std::tuple{one(f)...};
      },
      fields);
}

// Specialised for every record and message type: `name` and `fields` (a std::tuple of Field).
template <typename T>
struct FieldTable;

template <typename T>
concept HasFieldTable = requires { FieldTable<T>::fields; };

template <typename T, typename Visit>
constexpr void forEachField(Visit&& visit) {
  std::apply([&](const auto&... f) { (visit(f), ...); }, FieldTable<T>::fields);
}

// The name of the field that is `member` (for hand-written SQL and derived columns, so that
// they too spell the name only through the table). Empty when no field is that member.
template <typename Record, typename Value>
constexpr std::string_view fieldName(Value Record::*member) {
  std::string_view found;
  forEachField<Record>([&](const auto& f) {
    if constexpr (requires { f.access.member; })
      if constexpr (std::is_same_v<decltype(f.access.member), Value Record::*>)
        if (found.empty() && f.access.member == member) found = f.name;  // the first
  });
  return found;
}

// The value type a field holds (without reference and const).
template <typename F, typename Record>
using FieldValue = std::remove_cvref_t<decltype(std::declval<const F&>().get(std::declval<Record&>()))>;

// Specialised for every enum that crosses a boundary: `names`, an array of {value, name}.
template <typename E>
struct EnumNames;

template <typename E>
concept NamedEnum = std::is_enum_v<E> && requires { EnumNames<E>::names; };

template <NamedEnum E>
constexpr std::string_view enumName(E value) {
  for (const auto& [v, n] : EnumNames<E>::names)
    if (v == value) return n;
  return "unknown";
}

template <NamedEnum E>
constexpr std::optional<E> parseEnum(std::string_view text) {
  for (const auto& [v, n] : EnumNames<E>::names)
    if (n == text) return v;
  return std::nullopt;
}

template <NamedEnum E>
constexpr bool isKnownEnum(E value) {
  for (const auto& [v, n] : EnumNames<E>::names)
    if (v == value) return true;
  return false;
}

// "a, b or c": the accepted names, for error messages.
template <NamedEnum E>
std::string enumNameList() {
  std::string list;
  const auto& names = EnumNames<E>::names;
  for (std::size_t i = 0; i < names.size(); ++i)
    list += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i].second);
  return list;
}

}  // namespace dfi
