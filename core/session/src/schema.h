#pragma once
// The v1 schema (SCHEMA.md describes every table) and the checks a file must pass before any
// other query touches it.

#include "sqlite_handle.h"

namespace dfi::session::detail {

// Creates every table and index of an empty database and stamps application_id and
// user_version, in one transaction.
void createSchema(Database& db);

// Throws a FormatError naming the file unless it is a session this build can read: our
// application_id, a schema version no newer than ours, and every table present.
void checkSchema(Database& db);

}  // namespace dfi::session::detail
