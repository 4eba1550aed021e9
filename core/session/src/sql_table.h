#pragma once
// The session file's side of the record field tables (dfi/session/record_fields.h): each
// record's table DDL, its column list, its INSERT and the binding and decoding of its fields are
// generated from the fields, so a column is named only in the record's table. What the file
// adds to a record (a table name, keys, columns that are not record fields, and how columns
// added by a later schema version read in an older file) is SqlTable<R> below.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "blob_codec.h"
#include "dfi/base/error.h"
#include "dfi/session/record_fields.h"
#include "sqlite_handle.h"

namespace dfi::session::detail {

// A column a later schema version added, and the SQL that gives its value in an older file
// (read as that expression; a writer appending to an older file migrates it in place).
struct AddedColumn {
  std::string_view name;
  std::int32_t sinceVersion;
  std::string_view olderValue;  // SQL expression over the older version's columns
};

// Specialised per record: `name` (the SQL table), and where the file needs them: `integerKey`
// (the field that is the INTEGER PRIMARY KEY), `extraColumns` (columns that are not record
// fields, declared before them), `insertExtra` (their values on insert: {columns, values}),
// `constraints` (table constraints) and `added` (columns of later schema versions).
template <typename R>
struct SqlTable;

template <>
struct SqlTable<RunRecord> {
  static constexpr std::string_view name = "runs";
  static constexpr std::string_view integerKey = fieldName(&RunRecord::runId);
  // Schema v1 kept the mode and mask variant in settings_json only, and no sliding window: a
  // v1 run's window is the drafter config's sliding_window when it has sliding layers. Before
  // schema 4 every run was greedy and had one repeat. Before schema 5 there were no diagnoses
  // and no imported runs.
  static constexpr std::array<AddedColumn, 7> added{{
      {"mode", 2,
       "CASE WHEN json_valid(settings_json) THEN CASE json_extract(settings_json, '$.mode') "
       "WHEN 'teacher-forced' THEN 1 WHEN 'ddtree' THEN 2 ELSE 0 END ELSE 0 END"},
      {"mask_variant", 2,
       "CASE WHEN json_valid(settings_json) THEN coalesce(json_extract(settings_json, '$.mask_variant'), "
       "'reference') ELSE 'reference' END"},
      {"sliding_window", 2,
       "CASE WHEN json_valid(drafter_config_json) AND (instr(drafter_config_json, '\"sliding_attention\"') > 0 "
       "OR json_extract(drafter_config_json, '$.use_sliding_window') = 1) "
       "THEN coalesce(json_extract(drafter_config_json, '$.sliding_window'), 0) ELSE 0 END"},
      {"temperature", 4, "0"},
      {"sample", 4, "0"},
      {"hypothesis", 5, "''"},
      {"origin", 5, "''"},
  }};
};

template <>
struct SqlTable<PromptRecord> {
  static constexpr std::string_view name = "prompts";
  static constexpr std::string_view constraints = ", PRIMARY KEY(run_id, prompt_id)";
};

template <>
struct SqlTable<StepRecord> {
  static constexpr std::string_view name = "steps";
  static constexpr std::string_view integerKey = fieldName(&StepRecord::stepId);
  // Before schema 3 every step counted its accepted drafts and the bonus.
  // Before schema 4 every step was greedy and no drafter had a candidate selector; before
  // schema 6 none had a confidence head; before schema 7 no step recorded its slots' overlap or
  // its drafts' ids in a reduced draft vocabulary.
  static constexpr std::array<AddedColumn, 10> added{{{"counted_length", 3, "0"},
                                                     {"target_probs", 4, "x''"},
                                                     {"draft_probs", 4, "x''"},
                                                     {"accept_uniforms", 4, "x''"},
                                                     {"candidate_ids", 4, "x''"},
                                                     {"candidate_scores", 4, "x''"},
                                                     {"chosen_candidates", 4, "x''"},
                                                     {"draft_confidence", 6, "x''"},
                                                     {"slot_overlap", 7, "x''"},
                                                     {"draft_vocab_ids", 7, "x''"}}};
};

template <>
struct SqlTable<TreeRecord> {
  static constexpr std::string_view name = "trees";
  static constexpr std::string_view integerKey = fieldName(&TreeRecord::stepId);
};

template <>
struct SqlTable<StatisticRecord> {
  static constexpr std::string_view name = "statistics";
  static constexpr std::string_view extraColumns = "statistic_id INTEGER PRIMARY KEY, ";  // SQLite assigns it
};

template <>
struct SqlTable<TensorInfo> {
  static constexpr std::string_view name = "tensors";
  static constexpr std::string_view integerKey = fieldName(&TensorInfo::tensorId);
  // How the tiles in tensor_tiles are compressed; every writer so far writes zstd.
  static constexpr std::string_view extraColumns = "codec TEXT NOT NULL, ";
  static constexpr std::pair<std::string_view, std::string_view> insertExtra{"codec", "'zstd'"};
};

template <>
struct SqlTable<TokenString> {
  static constexpr std::string_view name = "token_strings";
  static constexpr std::string_view integerKey = fieldName(&TokenString::tokenId);
};

template <>
struct SqlTable<Annotation> {
  static constexpr std::string_view name = "annotations";
  static constexpr std::string_view integerKey = fieldName(&Annotation::annotationId);
};

template <typename R>
constexpr std::string_view integerKeyOf() {
  if constexpr (requires { SqlTable<R>::integerKey; }) return SqlTable<R>::integerKey;
  else return {};
}

// --- column types ---------------------------------------------------------------------------

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};

template <typename V, typename F>
constexpr std::string_view sqlType(const F& field) {
  if constexpr (std::is_same_v<V, double>) return "REAL";
  else if constexpr (std::is_same_v<V, std::string>) return field.traits.binary ? "BLOB" : "TEXT";
  else if constexpr (IsVector<V>::value) return "BLOB";
  else if constexpr (NamedEnum<V>) {
    if constexpr (requires { EnumNames<V>::storedAsText; }) return "TEXT";
    else return "INTEGER";
  } else return "INTEGER";
}

// The value a column added later has in rows written before it (a schema migration's DEFAULT).
template <typename V>
std::string sqlDefault() {
  if constexpr (std::is_same_v<V, std::string> || IsVector<V>::value) return "''";
  else if constexpr (NamedEnum<V>) {
    if constexpr (requires { EnumNames<V>::storedAsText; }) return "'" + std::string(EnumNames<V>::names[0].second) + "'";
    else return std::to_string(static_cast<std::int64_t>(EnumNames<V>::names[0].first));
  } else return "0";
}

template <typename R>
const AddedColumn* addedColumn(std::string_view column) {
  if constexpr (requires { SqlTable<R>::added; })
    for (const AddedColumn& a : SqlTable<R>::added)
      if (a.name == column) return &a;
  return nullptr;
}

// The largest id of R's table in the file, 0 when it is empty.
template <typename R>
std::int64_t maxId(Database& db) {
  const std::string table(SqlTable<R>::name);
  return db.queryInt("SELECT coalesce(max(" + std::string(integerKeyOf<R>()) + "), 0) FROM " + table, table);
}

// --- statements -----------------------------------------------------------------------------

template <typename R>
std::string createTableSql() {
  std::string sql = "CREATE TABLE " + std::string(SqlTable<R>::name) + "(";
  if constexpr (requires { SqlTable<R>::extraColumns; }) sql += SqlTable<R>::extraColumns;
  bool first = true;
  forEachField<R>([&](const auto& f) {
    using V = FieldValue<std::decay_t<decltype(f)>, R>;
    sql += (first ? "" : ", ") + std::string(f.name) + " " + std::string(sqlType<V>(f));
    sql += f.name == integerKeyOf<R>() ? " PRIMARY KEY" : " NOT NULL";
    first = false;
  });
  if constexpr (requires { SqlTable<R>::constraints; }) sql += SqlTable<R>::constraints;
  return sql + ");\n";
}

// The ALTER TABLE statements that bring a table of schema `version` to this build's.
template <typename R>
std::string migrationSql(std::int32_t version) {
  std::string sql;
  forEachField<R>([&](const auto& f) {
    using V = FieldValue<std::decay_t<decltype(f)>, R>;
    const AddedColumn* added = addedColumn<R>(f.name);
    if (!added || added->sinceVersion <= version) return;
    const std::string table(SqlTable<R>::name), column(f.name);
    sql += "ALTER TABLE " + table + " ADD COLUMN " + column + " " + std::string(sqlType<V>(f)) +
           " NOT NULL DEFAULT " + sqlDefault<V>() + ";\n";
    sql += "UPDATE " + table + " SET " + column + " = " + std::string(added->olderValue) + ";\n";
  });
  return sql;
}

// "SELECT <every field's column> FROM <table> <rest>" for a file of schema `version`: columns
// the file does not have yet read as their older value.
template <typename R>
std::string selectSql(std::int32_t version, std::string_view rest) {
  std::string sql = "SELECT ";
  bool first = true;
  forEachField<R>([&](const auto& f) {
    sql += first ? "" : ", ";
    first = false;
    const AddedColumn* added = addedColumn<R>(f.name);
    if (added && added->sinceVersion > version) sql += "(" + std::string(added->olderValue) + ") AS ";
    sql += std::string(f.name);
  });
  return sql + " FROM " + std::string(SqlTable<R>::name) + " " + std::string(rest);
}

template <typename R>
std::string insertSql(std::string_view onConflict = {}) {
  std::string columns, values;
  int index = 0;
  forEachField<R>([&](const auto& f) {
    const std::string separator = index++ ? ", " : "";
    columns += separator + std::string(f.name);
    values += separator + "?" + std::to_string(index);
  });
  if constexpr (requires { SqlTable<R>::insertExtra; }) {
    columns += ", " + std::string(SqlTable<R>::insertExtra.first);
    values += ", " + std::string(SqlTable<R>::insertExtra.second);
  }
  return "INSERT INTO " + std::string(SqlTable<R>::name) + "(" + columns + ") VALUES(" + values + ")" +
         (onConflict.empty() ? "" : " " + std::string(onConflict));
}

// The 1-based parameter of R's integer key in insertSql<R>().
template <typename R>
int keyParameter() {
  int index = 0, key = 0;
  forEachField<R>([&](const auto& f) {
    ++index;
    if (f.name == integerKeyOf<R>()) key = index;
  });
  return key;
}

// --- binding and decoding -------------------------------------------------------------------

// Byte-swap buffers for the arrays of one row (used on big-endian hosts only).
using RowScratch = std::vector<std::vector<std::uint8_t>>;

// Binds every field of `record` to ?1..?n, in table order.
template <typename R>
void bindFields(Statement& st, const R& record, RowScratch& scratch) {
  int index = 0;
  forEachField<R>([&](const auto& f) {
    using V = FieldValue<std::decay_t<decltype(f)>, R>;
    const V& value = f.get(record);
    ++index;
    if constexpr (std::is_same_v<V, double>) {
      st.bind(index, value);
    } else if constexpr (std::is_same_v<V, std::string>) {
      if (f.traits.binary) st.bindBlob(index, {reinterpret_cast<const std::uint8_t*>(value.data()), value.size()});
      else st.bind(index, std::string_view(value));
    } else if constexpr (IsVector<V>::value) {
      if (scratch.size() < static_cast<std::size_t>(index)) scratch.resize(static_cast<std::size_t>(index));
      st.bindBlob(index, encodeBlob<typename V::value_type>(value, scratch[static_cast<std::size_t>(index - 1)]));
    } else if constexpr (NamedEnum<V>) {
      if constexpr (requires { EnumNames<V>::storedAsText; }) st.bind(index, enumName(value));
      else st.bind(index, static_cast<std::int64_t>(value));
    } else {
      st.bind(index, static_cast<std::int64_t>(value));
    }
  });
}

// An integer column as V, rejected rather than truncated where a damaged file widened it past
// V; `where` (a callable giving the ErrorContext) is only called on failure, as this runs for
// several columns of every row.
template <typename V, typename Where>
V integerColumn(const Statement& row, int column, Where where) {
  const std::int64_t number = row.integer(column);
  if (!std::in_range<V>(number))
    throw FormatError("value " + std::to_string(number) + " does not fit " + std::to_string(8 * sizeof(V)) + " bits",
                      where());
  return static_cast<V>(number);
}

// Reads every field of a row selected with selectSql<R>, in table order, checking what a
// damaged file could get wrong in one value: an integer wider than its field, an array BLOB
// that is not whole elements, an enum value or name this build does not know.
template <typename R>
R decodeFields(const Statement& row, const std::string& file) {
  R record;
  int column = 0;
  forEachField<R>([&](const auto& f) {
    using V = FieldValue<std::decay_t<decltype(f)>, R>;
    V& value = f.get(record);
    const int c = column++;
    auto where = [&] { return ErrorContext{.file = file, .item = std::string(SqlTable<R>::name) + "." + std::string(f.name)}; };
    if constexpr (std::is_same_v<V, double>) {
      value = row.real(c);
    } else if constexpr (std::is_same_v<V, std::string>) {
      if (f.traits.binary) {
        const auto bytes = row.blob(c);
        value.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      } else {
        value = row.text(c);
      }
    } else if constexpr (IsVector<V>::value) {
      value = decodeBlob<typename V::value_type>(row.blob(c), where());
    } else if constexpr (NamedEnum<V>) {
      if constexpr (requires { EnumNames<V>::storedAsText; }) {
        const std::string name = row.text(c);
        const auto parsed = parseEnum<V>(name);
        if (!parsed) throw FormatError("unknown value '" + name + "' (" + enumNameList<V>() + ")", where());
        value = *parsed;
      } else {
        value = static_cast<V>(integerColumn<std::underlying_type_t<V>>(row, c, where));
        if (!isKnownEnum(value))
          throw FormatError("unknown value " + std::to_string(static_cast<std::int64_t>(value)) + " (" +
                                enumNameList<V>() + ")",
                            where());
      }
    } else {
      value = integerColumn<V>(row, c, where);
    }
  });
  return record;
}

}  // namespace dfi::session::detail
