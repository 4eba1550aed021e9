#pragma once
// The record tables of SCHEMA.md, generated from the field tables (record_fields.h) so the
// document cannot drift from the code: a test compares the generated text with the part of
// core/session/SCHEMA.md between its "generated" markers.

#include <string>

namespace dfi::session {

// Markdown: one section per record table, one row per column (name, SQL type, unit, meaning,
// the schema version that added it).
std::string schemaTablesMarkdown();

// The same tables as JSON, what a reader in another language needs to decode the file: per
// table its columns in order with their SQL type, array element type, enum names (by stored
// value), whether a string is raw bytes or JSON text, and for columns a later schema added the
// version and the SQL that gives their value in an older file. python/dflash_inspector's
// schema.json is this text (a test checks it), so the Python reader cannot drift from the writer.
std::string schemaTablesJson();

}  // namespace dfi::session
