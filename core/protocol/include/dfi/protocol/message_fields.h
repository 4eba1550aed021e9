#pragma once
// The messages' fields (messages.h), defined once: each table's name is the message's "type"
// and each field's name its JSON key. The run request's keys are those of `dflash-eval run`'s
// options with '_' for '-'.

#include <tuple>

#include "dfi/base/field_table.h"
#include "dfi/protocol/messages.h"
#include "dfi/session/record_fields.h"  // EnumNames<MaskVariant>

namespace dfi {

namespace protocol::detail {

// Every message that answers or names a request carries its id under one key.
template <typename M>
constexpr auto requestIdField(std::string_view doc, FieldTraits traits = {}) {
  return field<M>("request_id", &M::requestId, doc, traits);
}

inline constexpr FieldTraits kOptional{.optional = true};
inline constexpr FieldTraits kSeconds{.unit = "s"};

}  // namespace protocol::detail

template <>
struct EnumNames<protocol::RequestKind> {
  using E = protocol::RequestKind;
  static constexpr std::array<std::pair<E, std::string_view>, 3> names{
      {{E::Run, "run"}, {E::Inspect, "inspect"}, {E::Diagnose, "diagnose"}}};
};

template <>
struct FieldTable<protocol::RunOptions> {
  using R = protocol::RunOptions;
  static constexpr std::string_view name = "run options";
  static constexpr auto kOptional = protocol::detail::kOptional;
  static constexpr auto fields = std::tuple{
      field<R>("target", &R::target, "target model directory (Hugging Face layout)"),
      field<R>("drafters", &R::drafters, "DFlash drafter directories"),
      field<R>("prompts", &R::prompts, "prompts JSONL"),
      field<R>("modes", &R::modes, "live, teacher-forced (teacher), both, ddtree", kOptional),
      field<R>("mask_variants", &R::maskVariants,
               "reference, anchor-visible, block-causal, positions+1, no-context", kOptional),
      field<R>("anchors", &R::anchors, "teacher-forced anchors: live, every[:k], random:N[:seed]", kOptional),
      field<R>("ddtree_budget", &R::ddtreeBudget, "DDTree node budget, root excluded", kOptional),
      field<R>("block_size", &R::blockSize, "draft blocks of N; default: the checkpoint's", kOptional),
      field<R>("max_new_tokens", &R::maxNewTokens, "tokens to generate per prompt", kOptional),
      field<R>("limit", &R::limit, "evaluate the first N prompts", kOptional),
      field<R>("record_top_k", &R::recordTopK, "per-slot top-k stored with each step", kOptional),
      field<R>("temperature", &R::temperature, "live loop sampling temperature; 0: greedy", kOptional),
      field<R>("top_p", &R::topP, "sampling: nucleus mass in (0, 1]", kOptional),
      field<R>("top_k", &R::topK, "sampling: keep the k most probable tokens; 0: all", kOptional),
      field<R>("seed", &R::seed, "sampling: seed of every draw, mixed with repeat and prompt id", kOptional),
      field<R>("samples", &R::samples, "sampling: repeats of the evaluation", kOptional),
      field<R>("device", &R::device, "cpu, cuda:N, a comma list of devices, cuda:local", kOptional),
      field<R>("dtype", &R::dtype, "fp32, bf16 or fp16", kOptional),
      field<R>("no_chat", &R::noChat, "tokenize prompts as plain text", kOptional),
      field<R>("thinking", &R::thinking, "on or off: the chat template's enable_thinking", kOptional),
      field<R>("enable_thinking", &R::enableThinking, "the older spelling of thinking on", kOptional),
      field<R>("shard", &R::shard, "i/N or auto", kOptional),
      field<R>("skip_bad_prompts", &R::skipBadPrompts, "skip malformed prompt lines", kOptional),
      field<R>("no_parity", &R::noParity, "skip the train/eval parity check", kOptional),
      field<R>("hidden_statistics", &R::hiddenStatistics, "record hidden-state statistics per teacher-forced step",
               kOptional),
      field<R>("step_counting", &R::stepCounting,
               "live steps: dflash (dflash 0.1.0: last block shortened to the budget, counts cut at the budget "
               "and the first stop token) or full-blocks (every block of B, counted in full)",
               kOptional)};
};

template <>
struct FieldTable<protocol::RunRequest> {
  using R = protocol::RunRequest;
  static constexpr std::string_view name = "run";
  // The options travel next to the id, not nested, as `run`'s flags would.
  static constexpr auto fields = std::tuple_cat(
      std::tuple{protocol::detail::requestIdField<R>("the caller's id for this request", protocol::detail::kOptional)},
      FieldTable<protocol::RunOptions>::fields,
      std::tuple{field<R>("session", &R::session, "also write this session file on the engine's side",
                          protocol::detail::kOptional)});
};

template <>
struct FieldTable<protocol::DiagnoseRequest> {
  using R = protocol::DiagnoseRequest;
  static constexpr std::string_view name = "diagnose";
  static constexpr auto fields = std::tuple_cat(
      std::tuple{protocol::detail::requestIdField<R>("the caller's id for this request", protocol::detail::kOptional)},
      FieldTable<protocol::RunOptions>::fields,
      std::tuple{field<R>("session", &R::session, "also write this session file on the engine's side",
                          protocol::detail::kOptional),
                 field<R>("training_dump", &R::trainingDump,
                          "SpecForge offline features (input_ids, aux_hidden_state) to check the taps against",
                          protocol::detail::kOptional),
                 field<R>("budget_minutes", &R::budgetMinutes, "stop taking prompts past this",
                          protocol::detail::kOptional)});
};

template <>
struct FieldTable<protocol::InspectRequest> {
  using R = protocol::InspectRequest;
  static constexpr std::string_view name = "inspect";
  static constexpr auto kOptional = protocol::detail::kOptional;
  static constexpr auto fields = std::tuple{
      protocol::detail::requestIdField<R>("the caller's id for this request", kOptional),
      field<R>("target", &R::target, "target model directory"),
      field<R>("drafter", &R::drafter, "drafter directory"),
      field<R>("ids", &R::ids, "the prompt and the response through the anchor"),
      field<R>("anchor", &R::anchor, "the block's anchor position"),
      field<R>("mask_variant", &R::maskVariant, "the drafter's mask variant", kOptional),
      field<R>("top_k", &R::topK, "per-slot top-k of the re-drafted step", kOptional),
      field<R>("attention", &R::attention, "send every drafter layer's attention", kOptional),
      field<R>("statistics", &R::statistics, "send the hidden-state statistics", kOptional),
      field<R>("device", &R::device, "cpu or cuda:N", kOptional),
      field<R>("dtype", &R::dtype, "fp32, bf16 or fp16", kOptional),
      field<R>("block_size", &R::blockSize, "default: the checkpoint's", kOptional),
      field<R>("run_id", &R::runId, "the run the records are keyed to", kOptional),
      field<R>("step_id", &R::stepId, "the step the records are keyed to", kOptional)};
};

template <>
struct FieldTable<protocol::CancelRequest> {
  using R = protocol::CancelRequest;
  static constexpr std::string_view name = "cancel";
  static constexpr auto fields = std::tuple{protocol::detail::requestIdField<R>("the request to cancel")};
};

template <>
struct FieldTable<protocol::ShutdownRequest> {
  static constexpr std::string_view name = "shutdown";
  static constexpr auto fields = std::tuple{};
};

template <>
struct FieldTable<protocol::Hello> {
  using R = protocol::Hello;
  static constexpr std::string_view name = "hello";
  static constexpr auto fields = std::tuple{
      field<R>("protocol", &R::protocol, "kProtocolVersion of the engine"),
      field<R>("engine_version", &R::engineVersion, "dflash-eval's version"),
      field<R>("git", &R::git, "the commit it was built from"),
      field<R>("torch", &R::torch, "libtorch's version"),
      field<R>("cuda_compiled", &R::cudaCompiled, "built with CUDA"),
      field<R>("cuda_available", &R::cudaAvailable, "a CUDA device can be used"),
      field<R>("cuda_devices", &R::cudaDevices, "CUDA devices visible")};
};

template <>
struct FieldTable<protocol::Progress> {
  using R = protocol::Progress;
  static constexpr std::string_view name = "progress";
  static constexpr auto fields = std::tuple{
      protocol::detail::requestIdField<R>("the run request"),
      field<R>("done", &R::done, "(drafter, prompt) pairs finished"),
      field<R>("total", &R::total, "(drafter, prompt) pairs in all"),
      field<R>("elapsed_s", &R::elapsedSeconds, "time since the run started", protocol::detail::kSeconds),
      field<R>("eta_s", &R::etaSeconds, "estimated time left", protocol::detail::kSeconds),
      field<R>("current", &R::current, "what runs now, e.g. \"drafter 1/2, prompt 3/10\"")};
};

template <>
struct FieldTable<protocol::RunSummary> {
  using R = protocol::RunSummary;
  static constexpr std::string_view name = "run summary";
  static constexpr auto fields = std::tuple{
      field<R>("run_id", &R::runId, "the run's id in the engine's records"),
      field<R>("name", &R::name, "\"<drafter dir>/<mode>/<mask variant>\""),
      field<R>("steps", &R::steps, "steps recorded"),
      field<R>("tau_reference", &R::tauReference, "tau, reference convention"),
      field<R>("tau_vllm", &R::tauVllm, "tau, vLLM's convention"),
      field<R>("tau_sglang", &R::tauSglang, "tau, SGLang's convention (live runs only)", protocol::detail::kOptional)};
};

template <>
struct FieldTable<protocol::Done> {
  using R = protocol::Done;
  static constexpr std::string_view name = "done";
  static constexpr auto kOptional = protocol::detail::kOptional;
  static constexpr auto fields = std::tuple{
      protocol::detail::requestIdField<R>("the finished request"),
      field<R>("request", &R::request, "run or inspect", kOptional),
      field<R>("runs", &R::runs, "a run request's runs", kOptional),
      field<R>("tensors", &R::tensors, "tensor records an inspect sent", kOptional),
      field<R>("statistics", &R::statistics, "statistic records an inspect sent", kOptional)};
};

template <>
struct FieldTable<protocol::ErrorReply> {
  using R = protocol::ErrorReply;
  static constexpr std::string_view name = "error";
  static constexpr auto fields = std::tuple{
      protocol::detail::requestIdField<R>("the failed request; -1 when it could not be read",
                                          protocol::detail::kOptional),
      field<R>("message", &R::message, "what failed, naming the file or field"),
      field<R>("exit_code", &R::exitCode, "the exit code `dflash-eval` would end with")};
};

}  // namespace dfi
