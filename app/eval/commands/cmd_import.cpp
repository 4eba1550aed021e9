// dflash-eval import: another pipeline's records of a prompt set (z-lab, vLLM, SGLang, the
// documented JSONL) into a session as a live run, aligned with this engine's reference run on
// the same prompts (recorded first when the session has none) and judged per prompt.

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "command_inputs.h"
#include "dfi/analysis/alignment.h"
#include "dfi/base/error.h"
#include "dfi/engine/evaluation.h"
#include "dfi/imports/imported_records.h"
#include "dfi/session/reader.h"
#include "dfi/session/writer.h"
#include "import_report.h"

namespace dfi::eval {
namespace {

struct ImportOptions {
  std::string format;
  std::string file;
  std::string session;
  std::optional<session::RunId> reference;
  // To record the reference when the session has none.
  std::string target, drafter, prompts;
  std::optional<int> blockSize;
  std::optional<int> maxNewTokens;
  bool noChat = false;
  PlacementOptions placement;
  bool json = false;
};

constexpr const char* kImportFooter = R"(
Formats (one JSON object a line):
  zlab    z-lab dflash 0.1.0: what dflash_generate(..., return_stats=True) returns per prompt, as
          the benchmark keeps it (output_ids = prompt + generated, num_input_tokens,
          acceptance_lengths, ...); matched to prompts on their token ids
  vllm    vLLM RequestOutput of LLM.generate: prompt_token_ids, outputs[0].token_ids, and the
          V1 engine's outputs[0].spec_decode_metrics (vLLM 0.34 with
          --per-request-spec-decode-metrics: histogram, and at the detailed level
          per_step_accepted, the steps in order) or the V0 engine's
          metrics.spec_token_acceptance_counts (0.8-0.9: counts, no step order);
          request_id "N" is prompt N
  sglang  SGLang /generate response: output_ids, meta_info.spec_correct_drafts_histogram
          (spec_accept_histogram before 0.5.21; per-request histogram: no step order); the
          n-th line is prompt n unless it has "prompt_id"
  jsonl   {"prompt_id": 0, "prompt_ids": [...], "output_ids": [...], "acceptance_lengths": [...],
          "draft_tokens": [[...], ...], "block_size": 16, "format_version": 1} (README)

Reference: the session's live greedy run of this engine with the same block size (and
--max-new-tokens when given), or --reference RUN. When there is none, --target, --drafter and
--prompts record one first (live mode only), appended to the session.

Verdicts per prompt: "identical"; "drafter-side" (outputs identical, acceptance differs from
step k); "target-side" (output diverges from the target's greedy at token t: not lossless).)";

bool matchesReference(const session::RunRecord& run, const ImportOptions& o, std::optional<int> blockSize) {
  // A diagnosis's variant runs test a hypothesis on purpose; its baseline is a plain run.
  if (run.mode != session::EvaluationMode::Live || !run.origin.empty() || run.temperature != 0 ||
      !(run.hypothesis.empty() || run.hypothesis == "baseline"))
    return false;
  if (blockSize && run.blockSize != *blockSize) return false;
  if (o.maxNewTokens) {
    const auto settings = nlohmann::json::parse(run.settingsJson, nullptr, false);
    if (!settings.is_object() || settings.value("max_new_tokens", -1) != *o.maxNewTokens) return false;
  }
  return true;
}

std::vector<session::RunRecord> referenceCandidates(const ImportOptions& o, std::optional<int> blockSize) {
  std::vector<session::RunRecord> out;
  if (!std::filesystem::exists(o.session)) return out;
  session::Reader reader(o.session);
  for (auto& run : reader.runs())
    if (o.reference ? run.runId == *o.reference : matchesReference(run, o, blockSize)) out.push_back(run);
  return out;
}

// The engine's live greedy run on the prompts, appended to the session (created if absent).
void recordReference(const ImportOptions& o, std::optional<int> blockSize) {
  if (o.target.empty() || o.drafter.empty() || o.prompts.empty())
    throw UsageError("the session has no live greedy run of this engine to compare with: give --target, --drafter "
                     "and --prompts to record one, or --reference RUN",
                     {.file = o.session});
  engine::EvaluationSettings settings;
  settings.target = o.target;
  settings.drafters = {o.drafter};
  settings.prompts = o.prompts;
  settings.modes = {engine::EvaluationMode::Live};
  settings.blockSize = blockSize;
  settings.maxNewTokens = o.maxNewTokens.value_or(settings.maxNewTokens);
  settings.chatTemplate = !o.noChat;
  settings.parityCheck = false;  // a teacher-forced check; the reference is live only
  settings.model = o.placement.modelOptions();
  session::Writer writer(o.session, {.mode = std::filesystem::exists(o.session) ? session::OpenMode::Append
                                                                                 : session::OpenMode::CreateNew});
  engine::SessionSink sink(writer);
  CancellationToken cancel;
  std::fprintf(stderr, "import: recording the reference (live greedy) into %s\n", o.session.c_str());
  engine::runEvaluation(settings, sink, [](const engine::EvaluationProgress&) {}, cancel);
  writer.close();
}

session::RunRecord pickReference(const ImportOptions& o, std::optional<int> blockSize) {
  auto candidates = referenceCandidates(o, blockSize);
  if (candidates.empty() && o.reference)
    throw UsageError("run " + std::to_string(*o.reference) + " is not in the session", {.file = o.session});
  if (candidates.empty()) {
    recordReference(o, blockSize);
    candidates = referenceCandidates(o, blockSize);
    if (candidates.empty()) throw ValidationError("the reference run was not recorded", {.file = o.session});
    return candidates.back();
  }
  if (candidates.size() > 1) {
    std::string runs;
    for (const auto& c : candidates) runs += " " + std::to_string(c.runId) + " (" + c.name + ")";
    throw UsageError("several live greedy runs could be the reference:" + runs + "; choose one with --reference RUN",
                     {.file = o.session});
  }
  return candidates.front();
}

// Each imported response's prompt id in the reference run: its own, checked against the
// prompt's tokens where it records them, else found by its tokens.
std::vector<session::PromptId> matchPrompts(const imports::ImportedRecords& records,
                                            const std::vector<session::PromptRecord>& prompts) {
  std::map<session::PromptId, const session::PromptRecord*> byId;
  std::map<std::vector<session::TokenId>, session::PromptId> byTokens;
  for (const auto& p : prompts) {
    byId[p.promptId] = &p;
    byTokens.emplace(p.promptTokens, p.promptId);
  }
  std::vector<session::PromptId> ids;
  std::map<session::PromptId, std::size_t> seen;
  for (const auto& r : records.responses) {
    const ErrorContext where{.file = records.file, .item = "line " + std::to_string(r.line)};
    session::PromptId id = 0;
    if (r.promptId) {
      const auto it = byId.find(*r.promptId);
      if (it == byId.end())
        throw ValidationError("prompt " + std::to_string(*r.promptId) + " is not among the reference run's prompts", where);
      if (!r.promptTokens.empty() && r.promptTokens != it->second->promptTokens)
        throw ValidationError("the prompt's token ids differ from the reference's prompt " +
                                  std::to_string(*r.promptId) + " (another chat template or tokenizer?)",
                              where);
      id = *r.promptId;
    } else {
      const auto it = byTokens.find(r.promptTokens);
      if (it == byTokens.end())
        throw ValidationError("the prompt's token ids match none of the reference run's prompts (another chat "
                              "template or tokenizer, or another prompt set?)",
                              where);
      id = it->second;
    }
    if (const auto [it, fresh] = seen.emplace(id, r.line); !fresh)
      throw ValidationError("prompt " + std::to_string(id) + " again (first on line " + std::to_string(it->second) + ")",
                            where);
    ids.push_back(id);
  }
  return ids;
}

double now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The imported run: a live run whose steps come from the other pipeline (RunRecord::origin).
session::RunId writeImportedRun(const ImportOptions& o, const imports::ImportedRecords& records,
                                const session::RunRecord& reference, const std::vector<session::PromptRecord>& prompts,
                                const std::vector<session::PromptId>& ids) {
  const auto referenceSettings = nlohmann::json::parse(reference.settingsJson, nullptr, false);
  bool ordered = true;
  for (const auto& r : records.responses) ordered = ordered && r.stepOrderKnown;
  nlohmann::json settings{{"block_size", reference.blockSize}};
  settings[analysis::kImportSettings] = {{"format", imports::formatInfo(records.format).name},
                                         {"follows", imports::formatInfo(records.format).follows},
                                         {"file", std::filesystem::absolute(records.file).string()},
                                         {analysis::kImportReferenceRun, reference.runId},
                                         {analysis::kImportStepOrder, ordered ? std::string(analysis::kStepOrderRecorded)
                                                                              : "not recorded (per-request counts)"},
                                         {"ignored_fields", records.ignoredFields},
                                         // Two imports of one file stay two runs in `summary`, which
                                         // joins runs of equal settings (shards) into one.
                                         {"imported_at", now()}};
  // The prompt set's name, so that `summary` pairs the imported run with the reference's.
  if (referenceSettings.is_object() && referenceSettings.contains("prompts"))
    settings["prompts"] = referenceSettings["prompts"];
  session::RunRecord run;
  run.name = "import/" + std::string(imports::formatInfo(records.format).name) + "/" +
             std::filesystem::path(records.file).filename().string();
  run.target = reference.target;  // the records are of the same target (their prompts matched)
  run.drafter.path = std::filesystem::absolute(records.file).string();  // the other pipeline's drafter is not named
  run.mode = session::EvaluationMode::Live;
  run.blockSize = reference.blockSize;
  run.origin = imports::originText(records);
  run.settingsJson = settings.dump();
  run.startedAt = now();
  // Every record is built (and checked) before the session is opened: a refused file adds nothing.
  std::vector<session::PromptRecord> promptRecords;
  std::vector<std::vector<session::StepRecord>> steps;
  for (std::size_t i = 0; i < records.responses.size(); ++i) {
    const auto& r = records.responses[i];
    session::PromptRecord record = *std::ranges::find(prompts, ids[i], &session::PromptRecord::promptId);
    int committed = 1;
    for (int length : r.acceptLengths) committed += length;
    record.completionTokens = r.outputTokens.empty() ? committed : static_cast<std::int32_t>(r.outputTokens.size());
    steps.push_back(imports::importedSteps(r, static_cast<std::int64_t>(record.promptTokens.size()),
                                           reference.blockSize, records.file));
    promptRecords.push_back(std::move(record));
  }
  session::Writer writer(o.session, {.mode = session::OpenMode::Append});
  const session::RunId id = writer.addRun(run);
  for (std::size_t i = 0; i < promptRecords.size(); ++i) {
    promptRecords[i].runId = id;
    writer.addPrompt(promptRecords[i]);
    for (auto& step : steps[i]) {
      step.runId = id;
      step.promptId = ids[i];
      writer.addStep(step);
    }
  }
  writer.finishRun(id, now(), "{}");
  writer.close();
  return id;
}

int runImport(const ImportOptions& o) {
  const auto records = imports::readImportedRecords(imports::parseFormat(o.format), o.file);
  if (o.blockSize && records.blockSize && *o.blockSize != *records.blockSize)
    throw UsageError("--block-size " + std::to_string(*o.blockSize) + " differs from the records' block_size " +
                     std::to_string(*records.blockSize));
  const std::optional<int> blockSize = o.blockSize ? o.blockSize : records.blockSize;
  const auto reference = pickReference(o, blockSize);
  std::vector<session::PromptRecord> prompts = session::Reader(o.session).prompts(reference.runId);
  const auto ids = matchPrompts(records, prompts);
  const session::RunId imported = writeImportedRun(o, records, reference, prompts, ids);

  std::vector<analysis::ResponseTrace> traces;
  for (const auto& r : records.responses) traces.push_back({r.outputTokens, r.acceptLengths, r.stepOrderKnown});
  auto report = buildImportReport(o.session, reference.runId, imported, traces, ids);
  report.ignoredFields = records.ignoredFields;
  if (o.json) std::printf("%s\n", importReportJson(report).dump().c_str());
  else std::fputs(formatImportReport(report).c_str(), stdout);
  return 0;
}

}  // namespace

void registerImportCommand(CLI::App& app) {
  auto* sub = app.add_subcommand("import", "Import another pipeline's speculative-decoding records and align them "
                                           "with this engine's reference run");
  auto o = std::make_shared<ImportOptions>();
  sub->add_option("--format", o->format, "zlab | vllm | sglang | jsonl")->required();
  sub->add_option("file", o->file, "The other pipeline's records")->required()->check(CLI::ExistingFile);
  sub->add_option("--session", o->session, "Session file (.dfi) to add the imported run to")->required();
  sub->add_option("--reference", o->reference, "The run to compare with (default: the session's live greedy run)");
  sub->add_option("--target", o->target, "Target checkpoint, to record the reference when the session has none");
  sub->add_option("--drafter", o->drafter, "Drafter checkpoint, likewise");
  sub->add_option("--prompts", o->prompts, "Prompt set (JSONL, as for `run`), likewise");
  sub->add_option("--block-size", o->blockSize, "Block size of the records (picks or records the reference)");
  sub->add_option("--max-new-tokens", o->maxNewTokens, "Token budget of the records (picks or records the reference)");
  sub->add_flag("--no-chat", o->noChat, "Record the reference without the chat template, as `run --no-chat`");
  addPlacementOptions(*sub, o->placement);
  sub->add_flag("--json", o->json, "One JSON object on stdout instead of the table");
  sub->footer(kImportFooter);
  setAction(*sub, [o] { return runImport(*o); });
}

}  // namespace dfi::eval
