// `dflash-eval export --session F --format csv|json [--what runs|steps|metrics|positions] [-o out]`:
// a session's runs, steps, metrics (tau per prompt and overall under the three conventions,
// acceptance-length histogram) or acceptance by position (per draft slot, by the anchor's
// position, the drafter's calibration) for spreadsheets and scripts. Writes to stdout without -o.

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/analysis/metrics_export.h"
#include "diagnosis_report.h"
#include "dfi/analysis/position_report.h"
#include "dfi/base/error.h"
#include "dfi/session/export.h"
#include "dfi/session/reader.h"

namespace dfi::eval {
namespace {

struct ExportOptions {
  std::string session;
  std::string format = "csv";
  std::string what = "runs";
  std::string output;
};

int runExport(const ExportOptions& o) {
  const auto format = session::parseExportFormat(o.format);
  // The records are the session library's to export; the metrics computed from them are
  // dfi::analysis's, which reads the session through that library (not the other way round).
  session::Reader reader(o.session);
  auto write = [&](std::ostream& out) {
    if (o.what == "metrics")
      analysis::exportRunMetrics(reader, format, out);
    else if (o.what == "diagnosis")
      out << (format == session::ExportFormat::Json ? diagnosesJson(readSessionDiagnoses(o.session))
                                                    : diagnosesCsv(readSessionDiagnoses(o.session)));
    else if (o.what == "positions")
      analysis::exportPositionMetrics(reader, format, out);
    else
      session::exportSession(reader, session::parseExportWhat(o.what), format, out);
  };
  if (o.output.empty()) {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) throw IoError("cannot write to standard output");
    return 0;
  }
  // Written next to the target and renamed, so an interrupted export leaves no partial file.
  const std::string partial = o.output + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out) throw IoError("cannot create the export file", {.file = partial});
    write(out);
    out.close();
    if (!out) throw IoError("writing the export failed (disk full?)", {.file = partial});
  }
  std::error_code ec;
  std::filesystem::rename(partial, o.output, ec);
  if (ec) throw IoError("cannot move the export into place: " + ec.message(), {.file = o.output});
  return 0;
}

}  // namespace

void registerExportCommand(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* sub = app.add_subcommand("export", "Export a session's runs, steps, metrics or acceptance by position as CSV or JSON");
  sub->add_option("--session", options->session, "Session file (.dfi)")->required();
  sub->add_option("--format", options->format, "csv or json")->check(CLI::IsMember({"csv", "json"}))
      ->capture_default_str();
  sub->add_option("--what", options->what,
                  "runs, steps, metrics, positions (acceptance per draft slot, tau by anchor position, calibration) "
                  "or diagnosis (the hypotheses of each `diagnose`)")
      ->check(CLI::IsMember({"runs", "steps", "metrics", "positions", "diagnosis"}))
      ->capture_default_str();
  sub->add_option("-o,--output", options->output, "Output file (default: standard output)");
  setAction(*sub, [options] { return runExport(*options); });
}

}  // namespace dfi::eval
