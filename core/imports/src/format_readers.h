#pragma once
// One reader per format: each appends the file's responses to `records` (whose file is set).

#include "dfi/imports/imported_records.h"

namespace dfi::imports::detail {

void readZlab(ImportedRecords& records);
void readJsonl(ImportedRecords& records);
void readVllm(ImportedRecords& records);
void readSglang(ImportedRecords& records);

}  // namespace dfi::imports::detail
