#pragma once
// The run summary's rows and paired comparisons (run_summary.h) as field tables: `summary
// --json`, the run's `summary` event, serve's `done` and the GUI's CSV export are all written
// from these lists.
//
// The tau keys exist only for a row with answered prompts: a run cancelled before its first
// prompt has no tau, not a tau of 0. Those keys go through codecs that see the whole row
// (the field's value is the row itself), since whether they exist depends on another field.

#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "dfi/analysis/run_summary.h"
#include "dfi/base/field_table.h"

namespace dfi {

namespace analysis::summary_codec {

// The accessor of a key that is computed from the whole row.
struct WholeRow {
  constexpr SummaryRow& operator()(SummaryRow& r) const { return r; }
  constexpr const SummaryRow& operator()(const SummaryRow& r) const { return r; }
};

// "tau_reference": 3.25 and "tau_reference_ci95": [3.0, 3.5], from one Interval member.
template <Interval SummaryRow::*member>
struct Estimate {
  using Wire = std::optional<double>;
  static constexpr std::string_view expected = "a number";
  static Wire encode(const SummaryRow& r) { return r.responses > 0 ? Wire((r.*member).estimate) : std::nullopt; }
  static std::optional<SummaryRow> decode(const Wire& wire, SummaryRow row) {
    (row.*member).estimate = wire.value_or(0);
    return row;
  }
};

template <Interval SummaryRow::*member>
struct Bounds {
  using Wire = std::optional<std::vector<double>>;
  static constexpr std::string_view expected = "[low, high]";
  static Wire encode(const SummaryRow& r) {
    return r.responses > 0 ? Wire(std::vector{(r.*member).low, (r.*member).high}) : std::nullopt;
  }
  static std::optional<SummaryRow> decode(const Wire& wire, SummaryRow row) {
    if (!wire) return row;
    if (wire->size() != 2) return std::nullopt;
    (row.*member).low = (*wire)[0];
    (row.*member).high = (*wire)[1];
    return row;
  }
};

// tau_sglang (live runs only), present under the same rule.
template <std::optional<double> SummaryRow::*member>
struct AnsweredNumber {
  using Wire = std::optional<double>;
  static constexpr std::string_view expected = "a number";
  static Wire encode(const SummaryRow& r) { return r.responses > 0 ? r.*member : std::nullopt; }
  static std::optional<SummaryRow> decode(const Wire& wire, SummaryRow row) {
    row.*member = wire;
    return row;
  }
};

// "repeats" only for a sampled evaluation repeated more than once (it has the interval over repeats).
struct Repeats {
  using Wire = std::optional<int>;
  static constexpr std::string_view expected = "an integer";
  static Wire encode(const int& repeats) { return repeats > 1 ? Wire(repeats) : std::nullopt; }
  static std::optional<int> decode(const Wire& wire) { return wire.value_or(1); }
};

struct RepeatsBounds {
  using Wire = std::optional<std::vector<double>>;
  static constexpr std::string_view expected = "[low, high]";
  static Wire encode(const std::optional<Interval>& i) {
    return i ? Wire(std::vector{i->low, i->high}) : std::nullopt;
  }
  // A Student-t interval is symmetric about the repeats' mean: its midpoint is the estimate.
  static std::optional<std::optional<Interval>> decode(const Wire& wire) {
    if (!wire) return std::optional<Interval>();
    if (wire->size() != 2) return std::nullopt;
    return std::optional<Interval>(Interval{((*wire)[0] + (*wire)[1]) / 2, (*wire)[0], (*wire)[1]});
  }
};

// An interval's bounds next to its estimate's own key, for a key that is always there.
struct IntervalBounds {
  using Wire = std::vector<double>;
  static constexpr std::string_view expected = "[low, high]";
  static Wire encode(const Interval& i) { return {i.low, i.high}; }
  static std::optional<Interval> decode(const Wire& wire, Interval current) {
    if (wire.size() != 2) return std::nullopt;
    current.low = wire[0];
    current.high = wire[1];
    return current;
  }
};

// Text written only when not empty (step counting is a live run's; run ids exist once recorded).
struct NonEmptyText {
  using Wire = std::optional<std::string>;
  static constexpr std::string_view expected = "a string";
  static Wire encode(const std::string& s) { return s.empty() ? std::nullopt : Wire(s); }
  static std::optional<std::string> decode(const Wire& wire) { return wire.value_or(std::string()); }
};

struct RunIds {
  using Wire = std::optional<std::vector<std::int64_t>>;
  static constexpr std::string_view expected = "a list of run ids";
  static Wire encode(const std::vector<std::int64_t>& ids) { return ids.empty() ? std::nullopt : Wire(ids); }
  static std::optional<std::vector<std::int64_t>> decode(const Wire& wire) { return wire.value_or(std::vector<std::int64_t>{}); }
};

}  // namespace analysis::summary_codec

template <>
struct FieldTable<analysis::SummaryRow> {
  using R = analysis::SummaryRow;
  static constexpr std::string_view name = "summary row";
  static constexpr analysis::summary_codec::WholeRow whole{};
  static constexpr FieldTraits kOptional{.optional = true};
  static constexpr auto fields = std::tuple{
      field<R>("drafter", &R::drafter, "the drafter's short label (its checkpoint directory)"),
      field<R>("mode", &R::mode, "live, teacher-forced or ddtree-<budget>"),
      field<R>("mask_variant", &R::variant, "the drafter's attention mask variant"),
      field<R>("prompt_set", &R::dataset, "the prompts' \"dataset\" (or the prompts file's name); all: every set"),
      field<R>("sampling", &R::sampling, "greedy, or the sampling settings"),
      field<R>("responses", &R::responses, "responses with at least one step, over every repeat"),
      field<R>("steps", &R::steps, "steps (verify rounds) recorded"),
      codedField<analysis::summary_codec::Estimate<&R::tau>, R>(
          "tau_reference", whole, "tau, z-lab convention: the mean over prompts of each response's mean acceptance length",
          kOptional),
      codedField<analysis::summary_codec::Bounds<&R::tau>, R>(
          "tau_reference_ci95", whole, "its 95% bootstrap interval over prompts", kOptional),
      codedField<analysis::summary_codec::Estimate<&R::tauVllm>, R>(
          "tau_vllm", whole, "tau, vLLM's convention: accepted tokens over steps, pooled", kOptional),
      codedField<analysis::summary_codec::Bounds<&R::tauVllm>, R>(
          "tau_vllm_ci95", whole, "its 95% bootstrap interval over prompts (a ratio of pooled sums)", kOptional),
      codedField<analysis::summary_codec::AnsweredNumber<&R::tauSglang>, R>(
          "tau_sglang", whole, "tau, SGLang's convention: completion tokens over steps per request (live runs only)",
          kOptional),
      codedField<analysis::summary_codec::Repeats>("repeats", &R::repeats, "sampled repeats of each prompt",
                                                   kOptional),
      codedField<analysis::summary_codec::RepeatsBounds>(
          "tau_reference_repeats_ci95", &R::tauOverRepeats,
          "repeats > 1: the Student-t 95% interval over the repeats' tau", kOptional),
      codedField<analysis::summary_codec::NonEmptyText>("step_counting", &R::stepCounting,
                                                        "live runs: how the last steps were counted", kOptional),
      codedField<analysis::summary_codec::RunIds>("run_ids", &R::runIds, "the recorded runs the row summarizes",
                                                  kOptional)};
};

template <>
struct FieldTable<analysis::TauComparison> {
  using R = analysis::TauComparison;
  static constexpr std::string_view name = "paired comparison";
  static constexpr FieldTraits kOptional{.optional = true};
  static constexpr auto fields = std::tuple{
      field<R>("mode", &R::mode, "the mode both sides ran in"),
      field<R>("drafter", &R::drafter, "the compared drafter"),
      field<R>("mask_variant", &R::variant, "its mask variant"),
      field<R>("baseline", &R::baselineDrafter, "the drafter it is compared with"),
      field<R>("baseline_mask_variant", &R::baselineVariant, "the baseline's mask variant"),
      field<R>("prompts", &R::prompts, "prompts both sides answered (fewer than 8: too few for a verdict)"),
      field<R>("tau_reference_difference", [](auto& r) -> auto& { return r.difference.estimate; },
               "tau(compared) - tau(baseline), z-lab convention, over those prompts"),
      codedField<analysis::summary_codec::IntervalBounds>("tau_reference_difference_ci95", &R::difference,
                                                          "its 95% paired bootstrap interval over prompts"),
      field<R>("run_id", &R::run, "the compared side's first recorded run (0: not recorded yet)", kOptional),
      field<R>("baseline_run_id", &R::baselineRun, "the baseline's first recorded run", kOptional)};
};

}  // namespace dfi
