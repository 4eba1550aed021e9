#pragma once
// Turns rows of the session tables back into records, checking what a damaged file could get
// wrong (array sizes, enum values, tree links) so readers only ever see valid records.
// Each decoder reads the columns of its k*Columns list, in order, from a stepped statement.

#include "dfi/session/records.h"
#include "sqlite_handle.h"

namespace dfi::session::detail {

inline constexpr const char* kRunColumns =
    "run_id, name, target_path, target_config_json, target_weights_sha256, drafter_path, "
    "drafter_config_json, drafter_weights_sha256, engine_version, device, dtype, block_size, top_k, "
    "settings_json, shard, started_at, finished_at, timings_json";
inline constexpr const char* kPromptColumns =
    "run_id, prompt_id, dataset, turn, text, prompt_tokens, completion_tokens";
inline constexpr const char* kStepColumns =
    "step_id, run_id, prompt_id, step_index, mode, anchor_position, anchor_token, draft_tokens, "
    "target_tokens, accepted_count, bonus_token, topk_ids, topk_probs, garble_flags, mask_variant";
// length() of a BLOB reads its size from the row header, not its bytes.
inline constexpr const char* kStepSummaryColumns =
    "step_id, run_id, prompt_id, step_index, mode, anchor_position, length(draft_tokens), accepted_count, "
    "garble_flags";
inline constexpr const char* kTreeColumns = "step_id, node_tokens, node_log_probs, parents, accepted_path";
inline constexpr const char* kStatisticColumns = "run_id, step_id, name, layer, head, values_f32";
inline constexpr const char* kTensorColumns =
    "tensor_id, run_id, step_id, name, layer, head, dtype, shape, layout, tile_bytes";
inline constexpr const char* kTokenColumns = "token_id, raw, display";
inline constexpr const char* kAnnotationColumns = "annotation_id, run_id, step_id, kind, body, created_at";

RunRecord decodeRun(const Statement& row);
PromptRecord decodePrompt(const Statement& row, const std::string& file);
StepRecord decodeStep(const Statement& row, const std::string& file);
StepSummary decodeStepSummary(const Statement& row, const std::string& file);
TreeRecord decodeTree(const Statement& row, const std::string& file);
StatisticRecord decodeStatistic(const Statement& row, const std::string& file);
TensorInfo decodeTensorInfo(const Statement& row, const std::string& file);
TokenString decodeToken(const Statement& row);
Annotation decodeAnnotation(const Statement& row, const std::string& file);

}  // namespace dfi::session::detail
