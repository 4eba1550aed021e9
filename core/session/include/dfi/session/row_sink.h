#pragma once
// Streams export rows as CSV (one header line from the first row's keys, RFC 4180 quoting) or
// as the elements of one JSON array, so that large sessions are never built in memory. Public
// because the metrics export (dfi::analysis, which builds on this library) writes through it
// too, in the same two formats.

#include <ostream>

#include <nlohmann/json.hpp>

namespace dfi::session {

enum class ExportFormat { Csv, Json };

class RowSink {
 public:
  using Row = nlohmann::ordered_json;  // keeps columns in the order written

  RowSink(std::ostream& out, ExportFormat format);
  ~RowSink();  // closes the JSON array
  RowSink(const RowSink&) = delete;
  RowSink& operator=(const RowSink&) = delete;

  // `row` is an object whose keys are the CSV columns (in insertion order for the header).
  void write(const Row& row);

 private:
  void writeCsvLine(const Row& row, bool header);

  std::ostream& out_;
  ExportFormat format_;
  bool first_ = true;
};

}  // namespace dfi::session
