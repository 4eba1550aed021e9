#pragma once
// The session records on the wire: each record becomes one Frame whose header says its
// "type" ("run", "prompt", "step", "tree", "statistic", "tensor", "tokens") and carries the
// fields under their record names; a tensor's bytes travel as the frame's binary payload.
// The GUI writes what it receives into a local session, so live and recorded views share
// one reader path (docs/architecture.md, "One record format").

#include <string_view>
#include <variant>
#include <vector>

#include "dfi/protocol/frame.h"
#include "dfi/session/records.h"

namespace dfi::protocol {

using TokenStrings = std::vector<session::TokenString>;
using Record = std::variant<session::RunRecord, session::PromptRecord, session::StepRecord,
                            session::TreeRecord, session::StatisticRecord,
                            session::TensorRecord, TokenStrings>;

Frame encodeRecord(const Record& record);

// True when the frame's type names a record (other frames are control messages).
bool isRecordFrame(const Frame& frame);

// Throws dfi::FormatError naming `streamName`, the record type and the field on a missing or
// mistyped field.
Record decodeRecord(const Frame& frame, std::string_view streamName);

}  // namespace dfi::protocol
