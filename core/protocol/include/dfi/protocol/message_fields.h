#pragma once
// The messages' fields (messages.h), defined once: each table's name is the message's "type"
// and each field's name its JSON key. The requests' keys are the settings' (dfi/settings/
// settings_fields.h): `dflash-eval run`'s options with '_' for '-'.

#include <tuple>

#include "dfi/analysis/summary_fields.h"
#include "dfi/base/field_table.h"
#include "dfi/protocol/messages.h"
#include "dfi/session/record_fields.h"  // EnumNames<MaskVariant>
#include "dfi/settings/settings_fields.h"

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

// The requests carry the settings' keys (settings_fields.h) next to their id, not nested, as
// `run`'s flags would.
template <>
struct FieldTable<protocol::RunRequest> {
  using R = protocol::RunRequest;
  static constexpr std::string_view name = "run";
  static constexpr auto fields = std::tuple_cat(
      std::tuple{protocol::detail::requestIdField<R>("the caller's id for this request", protocol::detail::kOptional)},
      FieldTable<settings::RunSettings>::fields,
      std::tuple{field<R>("session", &R::session, "also write this session file on the engine's side",
                          protocol::detail::kOptional)});
};

template <>
struct FieldTable<protocol::DiagnoseRequest> {
  using R = protocol::DiagnoseRequest;
  static constexpr std::string_view name = "diagnose";
  static constexpr auto fields = std::tuple_cat(
      std::tuple{protocol::detail::requestIdField<R>("the caller's id for this request", protocol::detail::kOptional)},
      FieldTable<settings::DiagnoseSettings>::fields,
      std::tuple{field<R>("session", &R::session, "also write this session file on the engine's side",
                          protocol::detail::kOptional)});
};

template <>
struct FieldTable<protocol::InspectRequest> {
  using R = protocol::InspectRequest;
  static constexpr std::string_view name = "inspect";
  static constexpr auto fields = std::tuple_cat(
      std::tuple{protocol::detail::requestIdField<R>("the caller's id for this request", protocol::detail::kOptional)},
      FieldTable<settings::InspectSettings>::fields);
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
struct FieldTable<protocol::Done> {
  using R = protocol::Done;
  static constexpr std::string_view name = "done";
  static constexpr auto kOptional = protocol::detail::kOptional;
  static constexpr auto fields = std::tuple{
      protocol::detail::requestIdField<R>("the finished request"),
      field<R>("request", &R::request, "run or inspect", kOptional),
      field<R>("runs", &R::runs, "a run request's summary rows (summary --json's)", kOptional),
      field<R>("comparisons", &R::comparisons, "their paired comparisons (summary --json's)", kOptional),
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
