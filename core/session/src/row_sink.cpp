#include "dfi/session/row_sink.h"

#include <string>

namespace dfi::session {
namespace {

std::string joined(const RowSink::Row& array) {
  std::string text;
  for (const RowSink::Row& v : array) {
    if (!text.empty()) text += ' ';
    text += v.dump();
  }
  return text;
}

std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

RowSink::RowSink(std::ostream& out, ExportFormat format) : out_(out), format_(format) {
  if (format_ == ExportFormat::Json) out_ << "[";
}

RowSink::~RowSink() {
  if (format_ == ExportFormat::Json) out_ << (first_ ? "]\n" : "\n]\n");
}

void RowSink::write(const Row& row) {
  if (format_ == ExportFormat::Json) {
    // Text from the file may be invalid UTF-8 (a damaged or hand-edited session): replace it.
    out_ << (first_ ? "\n" : ",\n") << row.dump(-1, ' ', false, Row::error_handler_t::replace);
  } else {
    if (first_) writeCsvLine(row, true);
    writeCsvLine(row, false);
  }
  first_ = false;
}

void RowSink::writeCsvLine(const Row& row, bool header) {
  bool firstField = true;
  for (auto it = row.begin(); it != row.end(); ++it) {
    out_ << (firstField ? "" : ",");
    firstField = false;
    if (header) {
      out_ << it.key();
      continue;
    }
    const Row& v = it.value();
    out_ << csvField(v.is_string() ? v.get<std::string>() : v.is_array() ? joined(v) : v.dump());
  }
  out_ << "\n";
}

}  // namespace dfi::session
