// dflash-eval diagnose: lint the drafters against the target, then run the battery of
// hypotheses (engine/diagnosis.h) into a session and print each drafter's diagnosis, ranked.

#include <CLI/CLI.hpp>

#include "commands.h"
#include "run_options.h"
#include "session_diagnosis.h"

namespace dfi::eval {
namespace {

constexpr const char* kDiagnoseFooter = R"(
Each hypothesis is a teacher-forced evaluation at the anchors the baseline's live loop placed,
on the same greedy continuation, that would score higher if the drafter had been trained (or
is served) with one mismatch. Reported as the paired difference of tau (z-lab convention) over
the same prompts against the baseline with a 95% bootstrap interval; an interval above zero
marks a candidate cause. Names are stable (the JSON and the GUI use them):
  mask:<variant>           the drafter's attention mask (anchor-visible, block-causal, no-context)
  positions:+1             block slots one position later (position ids shifted)
  slot0:mask               the first slot holds the mask embedding instead of the anchor's
  block-size:<n>           blocks of n (the baseline's acceptance capped at n alike)
  taps-shift:<+1|-1>       every tap one layer later / earlier (layer -1: the embedding)
  tap-shift:<i>:<+1|-1>    tap i alone moved by one layer
  tap-ablate:<i>           tap i replaced by zeros (which taps the drafter leans on)
  tap-noise:<sigma>        Gaussian noise of sigma x each tap's RMS (fragility to noisy taps)
  thinking:<on|off>, chat-template:off   the prompt formatting
  target-dtype:<bf16|fp32>, gdn:<chunked|recurrent>   the numerics of the target's taps
  window:full              sliding-window layers attending to the whole context
  window-from:anchor       the sliding window as speculators trains it (the W positions before the
                           anchor, every slot), not counted back from each slot as servers run it
  rope:theta=<x>           the drafter's RoPE base replaced by the target's (where they differ)
  rope:partial=<f>         another fraction of each head rotated (1 where the config rotates less,
                           the target's where the config rotates all)
  vocab-map:identity       a reduced draft vocabulary's d2t ignored (draft id i as target id i)
  lm-head:target           the target's LM head instead of a reduced vocabulary's own
  sample-from-anchor:<on|off>  speculators' sample_from_anchor read the other way
Drafter-side hypotheses reuse one target pass per prompt; the last four rows run the target
again. Lint findings (mask token, taps, RoPE, tokenizer, config fields, prompt format) come
first, before any weight is read. Ctrl-C keeps every hypothesis measured so far (exit 130).
--json prints one object per drafter ({"lint": [...], "hypotheses": [{"name", "delta_tau",
"ci": [low, high], "applicable", ...}]}, hypotheses by delta_tau), an array for several.)";

struct DiagnoseOptions {
  RunCommandLine run;
  std::string out;
  bool overwrite = false;
  bool json = false;
  std::string progress = "auto";
  std::string trainingDump;
  std::string trainingTemplate;
  double budgetMinutes = 0;
};

int diagnose(const DiagnoseOptions& o) {
  engine::DiagnosisSettings settings;
  settings.evaluation = o.run.resolve();  // its seed seeds the tap noise
  if (!o.trainingDump.empty()) settings.trainingDump = o.trainingDump;
  if (!o.trainingTemplate.empty()) settings.trainingTemplate = o.trainingTemplate;
  if (o.budgetMinutes > 0) settings.budgetMinutes = o.budgetMinutes;
  settings::validate(settings);
  return diagnoseIntoSession(settings, o.out,
                             {.mode = o.overwrite ? session::OpenMode::Overwrite : session::OpenMode::CreateNew,
                              .progress = parseProgressStyle(o.progress),
                              .json = o.json});
}

}  // namespace

void registerDiagnoseCommand(CLI::App& app) {
  auto* sub = app.add_subcommand("diagnose", "Find the cause of low acceptance: lint, then a battery of hypotheses ranked by "
                                             "what each is worth");
  auto o = std::make_shared<DiagnoseOptions>();
  RunCommandLine& r = o->run;
  settings::RunSettings& s = r.settings;
  sub->add_option_function<std::string>("--target", [&s](const std::string& p) { s.target = p; },
                                        "Target model directory (Hugging Face layout)")
      ->required()
      ->check(CLI::ExistingDirectory);
  sub->add_option_function<std::vector<std::string>>(
         "--drafter", [&s](const std::vector<std::string>& d) { s.drafters.assign(d.begin(), d.end()); },
         "DFlash drafter directory (repeat: one diagnosis each)")
      ->required()
      ->check(CLI::ExistingDirectory);
  sub->add_option_function<std::string>("--prompts", [&s](const std::string& p) { s.prompts = p; },
                                        "Prompt set (JSONL, as `run` reads it)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("-o,--out,--session", o->out, "Session file to write (.dfi)")->required();
  sub->add_flag("--overwrite", o->overwrite, "Replace an existing session file");
  sub->add_flag("--json", o->json, "Print the diagnosis as JSON on stdout");
  sub->add_option("--training-dump", o->trainingDump, "Hidden states dumped by the training pipeline (.safetensors)")
      ->check(CLI::ExistingFile);
  sub->add_option("--training-template", o->trainingTemplate,
                  "The chat template (.jinja) the drafter's training data was rendered with; default: the one its "
                  "checkpoint ships")
      ->check(CLI::ExistingFile);
  sub->add_option("--budget-minutes", o->budgetMinutes,
                  "Stop taking prompts when the battery would pass this; every hypothesis is measured on the same prompts");
  sub->add_option("--max-new-tokens", s.maxNewTokens, "Tokens the baseline's live loop generates per prompt")
      ->capture_default_str();
  sub->add_option_function<std::int64_t>("--limit", [&s](const std::int64_t& n) { s.limit = n; }, "The first N prompts");
  sub->add_option_function<int>("--block-size", [&s](const int& n) { s.blockSize = n; },
                                "Blocks of this size instead of the drafter's block_size");
  sub->add_option("--record-top-k", s.topK, "Per-slot top-k stored with each step")->capture_default_str();
  sub->add_option("--seed", r.seed, "Seed of the tap noise")->capture_default_str();
  sub->add_option("--device,--devices", r.device, "cpu | cuda:N | cuda:0,cuda:1")->capture_default_str();
  sub->add_option("--dtype", s.model.dtype, "fp32 | bf16 | fp16: the baseline's compute dtype")->capture_default_str();
  sub->add_flag("--no-chat", r.noChat, "Tokenize prompts as plain text (no chat template)");
  sub->add_option("--thinking", r.thinking, "on | off: the chat template's enable_thinking")->capture_default_str();
  sub->add_option("--chat-template-kwargs", s.chatTemplateKwargs,
                  "JSON object of further chat template variables, as vLLM's chat_template_kwargs: {\"reasoning_effort\": \"high\"}");
  sub->add_option("--progress", o->progress, "auto | bar | plain | json | none")->capture_default_str();
  sub->footer(kDiagnoseFooter);
  setAction(*sub, [o] { return diagnose(*o); });
}

}  // namespace dfi::eval
