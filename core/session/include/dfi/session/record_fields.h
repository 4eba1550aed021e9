#pragma once
// The one vocabulary of records: each record's fields, defined once. These tables drive the
// stream codec (protocol/json_record.h), the session file's columns, inserts and row decoding
// (session/src/sql_table.h), the CSV/JSON export and SCHEMA.md (a test checks it against
// schemaDocumentation()). A field's name is written here and nowhere else; a new field is one
// line in its record's table (plus, for the file, a schema version and its migration).
//
// How each C++ type is written: integers as INTEGER; enums by name in JSON and exports, and in
// the file as INTEGER (or as TEXT where EnumNames says storedAsText, as schema v1 had it);
// double as REAL; strings as TEXT (`binary` ones, which may hold a partial UTF-8 sequence, as
// a BLOB in the file and hex in JSON); arrays as little-endian BLOBs in the file (blob_codec.h)
// and as arrays elsewhere.

#include "dfi/base/field_table.h"
#include "dfi/session/records.h"

namespace dfi {

template <>
struct EnumNames<session::EvaluationMode> {
  using E = session::EvaluationMode;
  static constexpr std::array<std::pair<E, std::string_view>, 3> names{
      {{E::Live, "live"}, {E::TeacherForced, "teacher-forced"}, {E::DDTree, "ddtree"}}};
};

template <>
struct EnumNames<session::MaskVariant> {
  using E = session::MaskVariant;
  static constexpr std::array<std::pair<E, std::string_view>, 5> names{{{E::Reference, "reference"},
                                                                         {E::AnchorVisible, "anchor-visible"},
                                                                         {E::BlockCausal, "block-causal"},
                                                                         {E::PositionsPlusOne, "positions+1"},
                                                                         {E::NoContext, "no-context"}}};
  static constexpr bool storedAsText = true;  // the file's mask_variant columns hold the name
};

template <>
struct EnumNames<session::TensorDType> {
  using E = session::TensorDType;
  static constexpr std::array<std::pair<E, std::string_view>, 5> names{
      {{E::F32, "float32"}, {E::F16, "float16"}, {E::BF16, "bfloat16"}, {E::U8, "uint8"}, {E::I32, "int32"}}};
};

template <>
struct EnumNames<session::AnnotationKind> {
  using E = session::AnnotationKind;
  static constexpr std::array<std::pair<E, std::string_view>, 3> names{
      {{E::Bookmark, "bookmark"}, {E::Note, "note"}, {E::Layout, "layout"}}};
};

template <>
struct FieldTable<session::RunRecord> {
  using R = session::RunRecord;
  static constexpr std::string_view name = "run";
  static constexpr auto fields = std::tuple{
      field<R>("run_id", &R::runId, "assigned by the writer, unique in a file"),
      field<R>("name", &R::name, "\"<drafter dir>/<mode>/<mask variant>\""),
      field<R>("target_path", [](auto& r) -> auto& { return r.target.path; }, "the target checkpoint's directory"),
      field<R>("target_config_json", [](auto& r) -> auto& { return r.target.configJson; },
               "the target's config.json, verbatim", {.bulky = true, .jsonText = true}),
      field<R>("target_weights_sha256", [](auto& r) -> auto& { return r.target.weightsSha256; },
               "SHA-256 (hex) over the target's safetensors headers"),
      field<R>("drafter_path", [](auto& r) -> auto& { return r.drafter.path; }, "the drafter checkpoint's directory"),
      field<R>("drafter_config_json", [](auto& r) -> auto& { return r.drafter.configJson; },
               "the drafter's config.json, verbatim", {.bulky = true, .jsonText = true}),
      field<R>("drafter_weights_sha256", [](auto& r) -> auto& { return r.drafter.weightsSha256; },
               "SHA-256 (hex) over the drafter's safetensors headers"),
      field<R>("engine_version", &R::engineVersion, "the dflash-eval that recorded the run"),
      field<R>("device", &R::device, "\"cuda:0 (NVIDIA H200)\", \"cpu\""),
      field<R>("dtype", &R::dtype, "compute dtype"),
      field<R>("mode", &R::mode, "live, teacher-forced or ddtree"),
      field<R>("mask_variant", &R::maskVariant, "the attention mask the drafter ran with"),
      field<R>("block_size", &R::blockSize, "B: the anchor and B-1 draft slots", {.unit = "tokens"}),
      field<R>("sliding_window", &R::slidingWindow, "W of the drafter's sliding-attention layers; 0: none",
               {.unit = "tokens"}),
      field<R>("top_k", &R::topK, "k of the per-slot top-k tables of the run's steps"),
      field<R>("temperature", &R::temperature, "the live loop's sampling temperature; 0: greedy"),
      field<R>("sample", &R::sample, "repeat of a sampled evaluation (--samples N): 0..N-1"),
      field<R>("hypothesis", &R::hypothesis,
               "diagnose: \"baseline\" or the hypothesis the run tests (\"taps-shift:-1\"), whose steps hold drafts "
               "through each block's first rejected slot (-1 after it) and no top-k; empty otherwise"),
      field<R>("origin", &R::origin, "empty when this engine recorded the run; else the imported file and its format"),
      field<R>("settings_json", &R::settingsJson, "every setting of the run, as JSON", {.jsonText = true}),
      field<R>("shard", &R::shard, "\"i/N\" when recorded with --shard, else empty"),
      field<R>("started_at", &R::startedAt, "Unix time", {.unit = "s"}),
      field<R>("finished_at", &R::finishedAt, "Unix time; 0 while running", {.unit = "s"}),
      field<R>("timings_json", &R::timingsJson, "prefill/draft/verify totals, as JSON", {.jsonText = true})};
};

template <>
struct FieldTable<session::PromptRecord> {
  using R = session::PromptRecord;
  static constexpr std::string_view name = "prompt";
  static constexpr auto fields = std::tuple{
      field<R>("run_id", &R::runId, "the run"),
      field<R>("prompt_id", &R::promptId, "stable index in the prompt set (JSONL line or its \"id\")"),
      field<R>("dataset", &R::dataset, "the prompt set's name"),
      field<R>("turn", &R::turn, "conversation turn evaluated"),
      field<R>("text", &R::text, "the prompt after its chat template"),
      field<R>("prompt_tokens", &R::promptTokens, "its token ids", {.unit = "int32[]"}),
      field<R>("completion_tokens", &R::completionTokens, "generated tokens, the prefill's included",
               {.unit = "tokens"})};
};

template <>
struct FieldTable<session::StepRecord> {
  using R = session::StepRecord;
  static constexpr std::string_view name = "step";
  static constexpr auto fields = std::tuple{
      field<R>("step_id", &R::stepId, "assigned by the writer, increasing in write order"),
      field<R>("run_id", &R::runId, "the run"),
      field<R>("prompt_id", &R::promptId, "the prompt"),
      field<R>("step_index", &R::stepIndex, "0-based position of the step within its response"),
      field<R>("mode", &R::mode, "live, teacher-forced or ddtree"),
      field<R>("anchor_position", &R::anchorPosition, "sequence position of the anchor token"),
      field<R>("anchor_token", &R::anchorToken, "the anchor's token id"),
      field<R>("draft_tokens", &R::draftTokens,
               "B-1 slots: slot i drafts position anchor+i+1; -1: no draft (not recorded by an imported engine, or "
               "past a diagnosis hypothesis's first rejection)",
               {.unit = "int32[]"}),
      field<R>("target_tokens", &R::targetTokens, "the target's token at each slot's position", {.unit = "int32[]"}),
      field<R>("accepted_count", &R::acceptedCount, "leading slots equal to the target (0..B-1)"),
      field<R>("bonus_token", &R::bonusToken, "the target's token after the accepted slots"),
      field<R>("topk_ids", &R::topKIds, "slots x k, row-major (k = the run's top_k)", {.unit = "int32[]", .bulky = true}),
      field<R>("topk_probs", &R::topKProbs, "slots x k, same order as topk_ids",
               {.unit = "float32[]", .bulky = true}),
      field<R>("garble_flags", &R::garbleFlags, "per slot, dfi/analysis/garble.h bits, or empty",
               {.unit = "uint8[]"}),
      field<R>("mask_variant", &R::maskVariant, "the attention-mask variant the drafter ran with"),
      field<R>("counted_length", &R::countedLength,
               "tokens counted when cut by the budget or a stop token (dflash 0.1.0); 0: accepted_count + 1",
               {.unit = "tokens"}),
      field<R>("target_probs", &R::targetProbs,
               "sampled steps, per slot: p, the target's probability of the draft (empty when greedy)",
               {.unit = "float32[]"}),
      field<R>("draft_probs", &R::draftProbs, "sampled steps, per slot: q, the drafter's probability of the draft",
               {.unit = "float32[]"}),
      field<R>("accept_uniforms", &R::acceptUniforms,
               "sampled steps, per slot: the uniform u of the acceptance test (accepted while u * q < p)",
               {.unit = "float32[]"}),
      field<R>("candidate_ids", &R::candidateIds,
               "DFlash2: per slot the selector's top selector_top_k tokens, slots x k (empty otherwise)",
               {.unit = "int32[]", .bulky = true}),
      field<R>("candidate_scores", &R::candidateScores, "DFlash2: the selector's path score of each candidate",
               {.unit = "float32[]", .bulky = true}),
      field<R>("chosen_candidates", &R::chosenCandidates,
               "DFlash2: per slot the index of the chosen candidate (the draft) in candidate_ids",
               {.unit = "int32[]"}),
      field<R>("draft_confidence", &R::draftConfidence,
               "DSpark: per slot the confidence head's predicted acceptance rate (empty otherwise)",
               {.unit = "float32[]"}),
      field<R>("slot_overlap", &R::slotOverlap,
               "teacher-forced, per slot with a known target: sum min(p, q) at temperature 1, the chance sampling "
               "accepts the slot after the true text (speculators' accept_rate, 1 - TV)",
               {.unit = "float32[]"}),
      field<R>("draft_vocab_ids", &R::draftVocabIds,
               "reduced draft vocabulary: per slot the draft's id in the drafter's vocabulary (draft_tokens holds "
               "its target id); empty otherwise",
               {.unit = "int32[]"})};
};

template <>
struct FieldTable<session::TreeRecord> {
  using R = session::TreeRecord;
  static constexpr std::string_view name = "tree";
  static constexpr auto fields = std::tuple{
      field<R>("step_id", &R::stepId, "the DDTree step"),
      field<R>("node_tokens", &R::nodeTokens, "node 0 is the root (the anchor)", {.unit = "int32[]"}),
      field<R>("node_log_probs", &R::nodeLogProbs, "log w(path) of each node under the draft",
               {.unit = "float32[]"}),
      field<R>("parents", &R::parents, "each node's parent index; -1 for the root", {.unit = "int32[]"}),
      field<R>("accepted_path", &R::acceptedPath, "node indices from the root, root included", {.unit = "int32[]"})};
};

template <>
struct FieldTable<session::StatisticRecord> {
  using R = session::StatisticRecord;
  static constexpr std::string_view name = "statistic";
  static constexpr auto fields = std::tuple{
      field<R>("run_id", &R::runId, "the run"),
      field<R>("step_id", &R::stepId, "the step; 0 for a run-level statistic"),
      field<R>("name", &R::name, "\"hidden.<tensor>.<stat>\", \"parity.<...>\", ..."),
      field<R>("layer", &R::layer, "-1 when not per layer"),
      field<R>("head", &R::head, "-1 when not per head"),
      field<R>("values_f32", &R::values, "one value, or one per position or slot", {.unit = "float32[]"})};
};

template <>
struct FieldTable<session::TensorInfo> {
  using R = session::TensorInfo;
  static constexpr std::string_view name = "tensor";
  static constexpr auto fields = std::tuple{
      field<R>("tensor_id", &R::tensorId, "assigned by the writer"),
      field<R>("run_id", &R::runId, "the run"),
      field<R>("step_id", &R::stepId, "the step; 0 when not tied to one"),
      field<R>("name", &R::name, "hook path: \"target.layers.3.attn.probs\", \"drafter.mask\""),
      field<R>("layer", &R::layer, "-1 when not per layer"),
      field<R>("head", &R::head, "-1 when not per head"),
      field<R>("dtype", &R::dtype, "float32, float16, bfloat16, uint8 or int32"),
      field<R>("shape", &R::shape, "dimensions", {.unit = "int64[]"}),
      field<R>("layout", &R::layout, "axis names or storage order, for the viewer"),
      field<R>("tile_bytes", &R::tileBytes, "raw bytes per stored tile (set by the writer)",
               {.unit = "bytes", .optional = true})};
};

template <>
struct FieldTable<session::TokenString> {
  using R = session::TokenString;
  static constexpr std::string_view name = "token";
  static constexpr auto fields = std::tuple{
      field<R>("token_id", &R::tokenId, "the token id"),
      field<R>("raw", &R::raw, "the token's bytes (may be a partial UTF-8 sequence)", {.binary = true}),
      field<R>("display", &R::display, "printable form: \"␣the\", \"\\\\n\", \"<0xE2>\"")};
};

template <>
struct FieldTable<session::Annotation> {
  using R = session::Annotation;
  static constexpr std::string_view name = "annotation";
  static constexpr auto fields = std::tuple{
      field<R>("annotation_id", &R::annotationId, "assigned by the writer"),
      field<R>("run_id", &R::runId, "0: session-wide"),
      field<R>("step_id", &R::stepId, "0: not tied to a step"),
      field<R>("kind", &R::kind, "bookmark, note or layout"),
      field<R>("body", &R::body, "note text, bookmark label, or view layout JSON"),
      field<R>("created_at", &R::createdAt, "Unix time", {.unit = "s"})};
};

}  // namespace dfi
