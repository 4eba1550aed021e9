#include "dfi/session/schema_doc.h"

#include <nlohmann/json.hpp>

#include "dfi/session/file_identity.h"
#include "sql_table.h"

namespace dfi::session {
namespace {

template <typename R>
std::string tableMarkdown() {
  using detail::SqlTable;
  std::string text = "### " + std::string(SqlTable<R>::name) + " (" + std::string(FieldTable<R>::name) +
                     " records)\n\n| column | type | unit | meaning |\n|---|---|---|---|\n";
  if constexpr (requires { SqlTable<R>::extraColumns; })
    text += "| " + std::string(SqlTable<R>::extraColumns.substr(0, SqlTable<R>::extraColumns.find(' '))) +
            " | (file only) | | not a record field |\n";
  forEachField<R>([&](const auto& f) {
    using V = FieldValue<std::decay_t<decltype(f)>, R>;
    std::string type(detail::sqlType<V>(f));
    if (f.name == detail::integerKeyOf<R>()) type += " PK";
    std::string meaning(f.doc);
    if (const auto* added = detail::addedColumn<R>(f.name))
      meaning += " (since schema " + std::to_string(added->sinceVersion) + ")";
    text += "| " + std::string(f.name) + " | " + type + " | " + std::string(f.traits.unit) + " | " + meaning + " |\n";
  });
  return text + "\n";
}

// The little-endian element type of an array column (blob_codec.h), empty for other columns.
template <typename V>
std::string_view arrayElement() {
  if constexpr (detail::IsVector<V>::value) {
    using E = typename V::value_type;
    if constexpr (std::is_same_v<E, std::int32_t>) return "int32";
    else if constexpr (std::is_same_v<E, std::int64_t>) return "int64";
    else if constexpr (std::is_same_v<E, float>) return "float32";
    else if constexpr (std::is_same_v<E, std::uint8_t>) return "uint8";
  }
  return {};
}

template <typename R>
nlohmann::json tableJson() {
  using detail::SqlTable;
  nlohmann::json columns = nlohmann::json::array();
  forEachField<R>([&](const auto& f) {
    using V = FieldValue<std::decay_t<decltype(f)>, R>;
    nlohmann::json column{{"name", f.name},
                          {"sql", detail::sqlType<V>(f)},
                          {"primary_key", f.name == detail::integerKeyOf<R>()},
                          {"array", arrayElement<V>()},
                          {"binary", f.traits.binary},
                          {"json_text", f.traits.jsonText},
                          {"unit", f.traits.unit},
                          {"doc", f.doc}};
    if constexpr (NamedEnum<V>) {
      nlohmann::json names = nlohmann::json::object();
      for (const auto& [value, name] : EnumNames<V>::names) names[std::to_string(static_cast<std::int64_t>(value))] = name;
      column["enum"] = names;
    }
    if (const auto* added = detail::addedColumn<R>(f.name))
      column["added"] = {{"since", added->sinceVersion}, {"older_value", added->olderValue}};
    columns.push_back(std::move(column));
  });
  return {{"record", FieldTable<R>::name}, {"columns", columns}};
}

}  // namespace

std::string schemaTablesJson() {
  nlohmann::json tables = nlohmann::json::object();
  auto add = [&]<typename R>(std::type_identity<R>) { tables[std::string(detail::SqlTable<R>::name)] = tableJson<R>(); };
  add(std::type_identity<RunRecord>{});
  add(std::type_identity<PromptRecord>{});
  add(std::type_identity<StepRecord>{});
  add(std::type_identity<TreeRecord>{});
  add(std::type_identity<StatisticRecord>{});
  add(std::type_identity<TensorInfo>{});
  add(std::type_identity<TokenString>{});
  add(std::type_identity<Annotation>{});
  const nlohmann::json schema{{"schema_version", kSchemaVersion}, {"application_id", kApplicationId}, {"tables", tables}};
  return schema.dump(1) + "\n";
}

std::string schemaTablesMarkdown() {
  return tableMarkdown<RunRecord>() + tableMarkdown<PromptRecord>() + tableMarkdown<StepRecord>() +
         tableMarkdown<TreeRecord>() + tableMarkdown<StatisticRecord>() + tableMarkdown<TensorInfo>() +
         tableMarkdown<TokenString>() + tableMarkdown<Annotation>();
}

}  // namespace dfi::session
