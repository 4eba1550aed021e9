#pragma once
// Turns rows of the session tables back into records, checking what a damaged file could get
// wrong (array sizes, enum values, tree links) so readers only ever see valid records. Each
// record is read from a row selected with selectSql<R> (sql_table.h); a step summary from one
// selected with stepSummarySql.

#include <cstdint>
#include <string>
#include <string_view>

#include "dfi/session/records.h"
#include "sqlite_handle.h"

namespace dfi::session::detail {

// Decodes the fields (sql_table.h's decodeFields), then checks the record as a whole.
template <typename R>
R decodeRecord(const Statement& row, const std::string& file);

// The few columns a StepSummary needs, without reading the token arrays: "SELECT ... FROM
// steps <rest>".
std::string stepSummarySql(std::int32_t version, std::string_view rest);
StepSummary decodeStepSummary(const Statement& row, const std::string& file);

}  // namespace dfi::session::detail
