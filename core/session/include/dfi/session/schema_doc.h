#pragma once
// The record tables of SCHEMA.md, generated from the field tables (record_fields.h) so the
// document cannot drift from the code: a test compares the generated text with the part of
// core/session/SCHEMA.md between its "generated" markers.

#include <string>

namespace dfi::session {

// Markdown: one section per record table, one row per column (name, SQL type, unit, meaning,
// the schema version that added it).
std::string schemaTablesMarkdown();

}  // namespace dfi::session
