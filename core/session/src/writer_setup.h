#pragma once
// Opens (creating, replacing or appending to) the database a Writer records into, and sets the
// pragmas recording relies on (WAL, synchronous=NORMAL).

#include <memory>
#include <string>

#include "dfi/session/writer.h"
#include "sqlite_handle.h"

namespace dfi::session::detail {

std::unique_ptr<Database> openForWriting(const std::string& path, OpenMode mode);

}  // namespace dfi::session::detail
