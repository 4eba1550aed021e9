#pragma once
// The messages between the GUI and `dflash-eval serve`, one C++ type each. A message is one
// Frame whose header holds "type" (the FieldTable's name) and the type's fields; the tables
// (message_fields.h) name every key once, so the GUI (ui/engine) and the engine
// (app/eval/cmd_serve.cpp, which dispatches the requests) never write a key by hand and a
// renamed field fails to compile. The records of a run travel as record frames
// (record_codec.h) on the same stream.
//
//   GUI -> engine (Request):  run, inspect, cancel, shutdown
//   engine -> GUI (Reply):    hello (first), progress, done, error
//
// Requests carry a request_id that their progress, done and error replies repeat; an error
// about a request whose id cannot be read carries kNoRequest.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dfi/analysis/run_summary.h"
#include "dfi/protocol/frame.h"
#include "dfi/session/records.h"
#include "dfi/settings/settings.h"

namespace dfi::protocol {

// Raised when a message or a record on the stream changes incompatibly; the GUI refuses an
// engine of another version. 2: the records' stream names are the field tables' (values_f32,
// ...), the same as the file's.
inline constexpr int kProtocolVersion = 2;

using RequestId = std::int64_t;
inline constexpr RequestId kNoRequest = -1;

// The requests' payloads are the settings vocabulary (dfi/settings/settings.h): typed values
// whose keys (settings_fields.h) are `run`'s options with '_' for '-', written next to the
// request's id. The engine validates them (settings::validate) before it runs anything.
struct RunRequest : settings::RunSettings {
  RequestId requestId = 0;
  std::optional<std::string> session;  // a session file to write on the engine's side too

  bool operator==(const RunRequest&) const = default;
};

// A diagnosis (`dflash-eval diagnose`): of the run settings it reads what DiagnoseSettings
// says; the hypothesis runs stream as a run's records.
struct DiagnoseRequest : settings::DiagnoseSettings {
  RequestId requestId = 0;
  std::optional<std::string> session;  // a session file to write on the engine's side too

  bool operator==(const DiagnoseRequest&) const = default;
};

// One recorded block re-drafted with every probe on (the engine's inspectBlock takes it as is).
struct InspectRequest : settings::InspectSettings {
  RequestId requestId = 0;

  bool operator==(const InspectRequest&) const = default;
};

struct CancelRequest {
  RequestId requestId = 0;
  bool operator==(const CancelRequest&) const = default;
};

// Cancels the active request, drops the queue and ends the server.
struct ShutdownRequest {
  bool operator==(const ShutdownRequest&) const = default;
};

struct Hello {
  int protocol = kProtocolVersion;
  std::string engineVersion;
  std::string git;
  std::string torch;
  bool cudaCompiled = false;
  bool cudaAvailable = false;
  int cudaDevices = 0;

  bool operator==(const Hello&) const = default;
};

struct Progress {
  RequestId requestId = 0;
  std::int64_t done = 0;  // (drafter, prompt) pairs finished
  std::int64_t total = 0;
  double elapsedSeconds = 0;
  double etaSeconds = 0;
  std::string current;  // "drafter 1/2, prompt 3/10"

  bool operator==(const Progress&) const = default;
};

enum class RequestKind { Run, Inspect, Diagnose };

// A request finished: a run with its summary (the rows `dflash-eval summary` prints for it), an
// inspect with the counts of what it sent.
struct Done {
  RequestId requestId = 0;
  RequestKind request = RequestKind::Run;
  std::vector<analysis::SummaryRow> runs;
  std::vector<analysis::TauComparison> comparisons;  // the summary's paired comparisons of those runs
  std::int64_t tensors = 0;
  std::int64_t statistics = 0;

  bool operator==(const Done&) const = default;
};

struct ErrorReply {
  RequestId requestId = kNoRequest;
  std::string message;
  int exitCode = 1;  // the dfi::Error's, as `dflash-eval` would exit with

  bool operator==(const ErrorReply&) const = default;
};

using Request = std::variant<RunRequest, InspectRequest, DiagnoseRequest, CancelRequest, ShutdownRequest>;
using Reply = std::variant<Hello, Progress, Done, ErrorReply>;

Frame encodeMessage(const Request& request);
Frame encodeMessage(const Reply& reply);

// Throw dfi::FormatError naming `streamName`, the message type and the field on an unknown
// type, a missing or mistyped field, an out-of-range integer or an unexpected payload.
Request decodeRequest(const Frame& frame, std::string_view streamName);
Reply decodeReply(const Frame& frame, std::string_view streamName);

// One lambda per message type for std::visit, so that a new message type is a compile error
// wherever it is not handled.
template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};

// The frame's request_id when it is one, else kNoRequest: what an error reply to a frame that
// does not decode can still say. Never throws.
RequestId requestIdOf(const Frame& frame) noexcept;

}  // namespace dfi::protocol
