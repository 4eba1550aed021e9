#include "dfi/session/merge.h"

#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "dfi/base/error.h"
#include "dfi/session/reader.h"
#include "schema.h"
#include "sqlite_handle.h"

namespace dfi::session {

using detail::Database;
using detail::Statement;

namespace {

namespace fs = std::filesystem;

// Tables copied from every input, parents before children.
constexpr const char* kCopiedTables[] = {"runs",   "prompts", "steps",        "trees",
                                         "statistics", "tensors", "tensor_tiles", "annotations"};

// How each id column is re-keyed: shifted past the ids already in the output. Run and step id
// 0 mean "none" (a session-wide annotation, a run-level statistic) and stay 0.
const std::map<std::string, std::string> kRekeyed = {
    {"run_id", "CASE WHEN run_id = 0 THEN 0 ELSE run_id + :run END"},
    {"step_id", "CASE WHEN step_id = 0 THEN 0 ELSE step_id + :step END"},
    {"statistic_id", "statistic_id + :statistic"},
    {"tensor_id", "tensor_id + :tensor"},
    {"annotation_id", "annotation_id + :annotation"},
};

// Copies every column of the output's table; a column the input's older schema lacks gets the
// value its migration would give it.
std::string copySql(Database& out, const std::string& table) {
  Statement columns(out, "SELECT name FROM pragma_table_info(?1) ORDER BY cid", "schema");
  Statement inInput(out, "SELECT count(*) FROM pragma_table_info(?1, 'src') WHERE name = ?2", "schema");
  columns.bind(1, std::string_view(table));
  std::string names, values;
  while (columns.step()) {
    const std::string column = columns.text(0);
    const auto rekey = kRekeyed.find(column);
    std::string value = rekey == kRekeyed.end() ? column : rekey->second;
    {
      auto guard = inInput.use();
      inInput.bind(1, std::string_view(table));
      inInput.bind(2, std::string_view(column));
      if (inInput.step() && inInput.integer(0) == 0) {
        const auto older = detail::olderColumnValue(table, column);
        if (!older) throw FormatError("the input has no column '" + column + "'", {.item = table});
        value = "(" + *older + ")";
      }
    }
    names += (names.empty() ? "" : ", ") + column;
    values += (values.empty() ? "" : ", ") + value;
  }
  return "INSERT INTO main." + table + " (" + names + ") SELECT " + values + " FROM src." + table;
}

void failOnTokenConflict(Database& out, std::span<const std::string> inputs, std::size_t current) {
  Statement clash(out,
                  "SELECT s.token_id, o.file_index FROM src.token_strings s "
                  "JOIN main.token_strings m ON m.token_id = s.token_id "
                  "JOIN temp.token_origin o ON o.token_id = s.token_id "
                  "WHERE s.raw IS NOT m.raw OR s.display IS NOT m.display LIMIT 1",
                  "token_strings");
  if (!clash.step()) return;
  const auto earlier = static_cast<std::size_t>(clash.integer(1));
  throw ValidationError("token " + std::to_string(clash.integer(0)) + " has different strings in " +
                            inputs[earlier] + " and " + inputs[current] + " (recorded with different tokenizers?)",
                        {.file = inputs[current], .item = "token_strings"});
}

void mergeOne(Database& out, std::span<const std::string> inputs, std::size_t index) {
  const std::string& input = inputs[index];
  Statement attach(out, "ATTACH DATABASE ?1 AS src", "merge");
  attach.bind(1, std::string_view(input));
  attach.run();
  try {
    failOnTokenConflict(out, inputs, index);
    const std::pair<const char*, std::int64_t> offsets[] = {
        {":run", out.queryInt("SELECT coalesce(max(run_id), 0) FROM main.runs", "runs")},
        {":step", out.queryInt("SELECT coalesce(max(step_id), 0) FROM main.steps", "steps")},
        {":statistic", out.queryInt("SELECT coalesce(max(statistic_id), 0) FROM main.statistics", "statistics")},
        {":tensor", out.queryInt("SELECT coalesce(max(tensor_id), 0) FROM main.tensors", "tensors")},
        {":annotation", out.queryInt("SELECT coalesce(max(annotation_id), 0) FROM main.annotations", "annotations")},
    };
    detail::Transaction txn(out, "merge");
    for (const char* table : kCopiedTables) {
      Statement copy(out, copySql(out, table), table);
      for (const auto& [name, offset] : offsets)
        if (const int i = copy.parameterIndex(name)) copy.bind(i, offset);
      copy.run();
    }
    Statement origin(out, "INSERT OR IGNORE INTO temp.token_origin SELECT token_id, ?1 FROM src.token_strings",
                     "token_strings");
    origin.bind(1, static_cast<std::int64_t>(index));
    origin.run();
    out.exec("INSERT OR IGNORE INTO main.token_strings SELECT token_id, raw, display FROM src.token_strings",
             "token_strings");
    txn.commit();
  } catch (const FormatError& e) {
    out.exec("DETACH DATABASE src", "merge");
    // Damage met while copying is in the attached input, not in the output being written.
    if (e.context().file == out.path()) {
      ErrorContext where = e.context();
      where.file = input;
      throw FormatError(e.message(), where);
    }
    throw;
  } catch (...) {
    out.exec("DETACH DATABASE src", "merge");
    throw;
  }
  out.exec("DETACH DATABASE src", "merge");
}

}  // namespace

MergeSummary mergeSessions(std::span<const std::string> inputs, const std::string& output, bool overwrite) {
  if (inputs.empty()) throw UsageError("nothing to merge", {.file = output});
  std::error_code ec;
  for (const std::string& input : inputs) {
    if (fs::exists(output, ec) && fs::equivalent(input, output, ec))
      throw UsageError("the output is also an input", {.file = output});
    Reader check(input);  // header, schema version and tables, with clear errors; recovers a crashed file
  }
  if (!overwrite && fs::exists(output, ec))
    throw UsageError("output exists (pass --force to replace it)", {.file = output});

  const std::string partial = output + ".partial";
  for (const char* suffix : {"", "-journal"}) fs::remove(partial + suffix, ec);
  MergeSummary summary;
  {
    Database out(partial, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    out.exec("PRAGMA page_size=8192", "schema");
    detail::createSchema(out);
    out.exec("CREATE TEMP TABLE token_origin(token_id INTEGER PRIMARY KEY, file_index INTEGER NOT NULL)", "merge");
    try {
      for (std::size_t i = 0; i < inputs.size(); ++i) mergeOne(out, inputs, i);
      Statement meta(out, "INSERT INTO meta VALUES('merged_from', ?1)", "meta");
      const std::string sources = nlohmann::json(std::vector<std::string>(inputs.begin(), inputs.end())).dump();
      meta.bind(1, std::string_view(sources));
      meta.run();
      summary.runs = out.queryInt("SELECT count(*) FROM runs", "runs");
      summary.steps = out.queryInt("SELECT count(*) FROM steps", "steps");
      summary.tokenStrings = out.queryInt("SELECT count(*) FROM token_strings", "token_strings");
    } catch (...) {
      fs::remove(partial, ec);
      throw;
    }
  }
  fs::rename(partial, output, ec);
  if (ec) throw IoError("cannot move the merged file into place: " + ec.message(), {.file = output});
  return summary;
}

}  // namespace dfi::session
