#pragma once
// The session file's schema (SCHEMA.md describes every table; the record tables come from the
// field tables through sql_table.h) and the checks a file must pass before any other query
// touches it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sqlite_handle.h"

namespace dfi::session::detail {

// Creates every table and index of an empty database and stamps application_id and
// user_version, in one transaction.
void createSchema(Database& db);

// Throws a FormatError naming the file unless it is a session this build can read: our
// application_id, a schema version no newer than ours, and every table present. Returns the
// file's schema version (older ones are read through sql_table.h's AddedColumn expressions).
std::int32_t checkSchema(Database& db);

// Brings a file of an older schema version to this build's, in one transaction (a writer
// appending to it). A file of the current version is left as it is.
void migrateSchema(Database& db, std::int32_t fromVersion);

// The SQL that gives `column` of `table` in a file written before the column was added (an
// AddedColumn of sql_table.h), for copying rows out of such a file; nullopt for a column that
// every schema version has.
std::optional<std::string> olderColumnValue(std::string_view table, std::string_view column);

}  // namespace dfi::session::detail
