// dflash-eval run: evaluate drafters against a target on a prompt set into a session file.

#include <algorithm>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/base/log_text.h"
#include "dfi/engine/runtime.h"
#include "gate_report.h"
#include "run_options.h"
#include "session_evaluation.h"
#include "shard_spec.h"

namespace dfi::eval {
namespace {

// What --help cannot say option by option: how the pieces combine.
constexpr const char* kRunFooter = R"(
Prompts (JSONL, one object a line; blank lines and lines starting with # are ignored):
  {"prompt": "..."} or {"question": "..."}     one user turn
  {"turns": ["...", "..."]}                     SpecBench/MT-Bench: the FIRST turn is evaluated,
                                                as its own conversation (later turns are not run)
  {"messages": [{"role": "user", "content": "..."}, ...]}   a whole conversation
  {"ids": [1, 2, 3]}                            token ids, no template
  optional "id" (stable prompt id, default: index among prompts) and "dataset" (the prompt set
  in the summary; default: the file's name). A malformed line is refused with its file and line
  number; --skip-bad-prompts skips it with a warning instead.

Prompt selection: --limit N takes the first N prompts of the file, then --shard i/N keeps
prompts k with k % N == i of those, so the shards of a limited run together cover exactly the
first N prompts. --shard auto reads RANK/WORLD_SIZE (torchrun), else SLURM_PROCID/SLURM_NTASKS
(srun); each rank then writes eval.shard-i-of-N.dfi for -o eval.dfi (or put {shard} in --out);
`dflash-eval merge` joins them and `dflash-eval summary` tabulates the whole. --device
cuda:local gives each rank its own GPU: cuda:LOCAL_RANK (torchrun), else cuda:SLURM_LOCALID,
modulo the GPUs the rank can see.

Modes: live records the speculative-decoding loop; teacher replays the drafter on the live loop's
greedy continuation (one run per --mask-variant); both is live + teacher; --ddtree N adds
DDTree-N runs built from the teacher-forced top-k (--ddtree 0: none).

Output: a progress bar with ETA on a terminal (plain lines in a log file); --progress json writes
JSON lines on stdout instead ({"event":"progress"|"summary"|"error"|"cancelled", ...}; warnings
and errors stay on stderr). At the end, tau per drafter, mode, mask variant and prompt set with a
95% bootstrap interval over responses, and each drafter against the first on the same prompts
(paired bootstrap of the tau difference). Ctrl-C stops after the current prompt; everything so far
stays in the session and is summarised (exit code 130). With --require, the pass bars are checked
on the session at the end, as `dflash-eval gate` does (exit code 6 when one is missed).)";

}  // namespace

void registerRunCommand(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Evaluate drafters against a target on a prompt set into a .dfi session");
  auto options = std::make_shared<RunCommandLine>();
  auto session = std::make_shared<std::string>();
  auto overwrite = std::make_shared<bool>(false);
  auto progress = std::make_shared<std::string>("auto");
  addRunOptions(*sub, *options);
  sub->add_option("-o,--out,--session", *session, "Session file to write (.dfi); {shard} becomes i-of-N")->required();
  sub->add_flag("--overwrite", *overwrite, "Replace an existing session file");
  sub->add_option("--progress", *progress, "auto (a bar on a terminal, else plain lines) | bar | plain | json (JSON lines on stdout) | none")->capture_default_str();
  sub->footer(kRunFooter);
  setAction(*sub, [options, session, overwrite, progress] {
    const EnvLookup env = processEnvironment();
    const ShardSpec shard = resolveShard(options->shard, env);
    if (const auto warning = unshardedLauncherWarning(options->shard, env)) logText("eval", LogLevel::Warn, *warning);
    SessionReport report{parseProgressStyle(*progress), nlohmann::json::object()};
    if (shard.count > 1) report.context["shard"] = std::to_string(shard.index) + "/" + std::to_string(shard.count);
    engine::EvaluationSettings settings = options->resolve(env);
    if (std::ranges::find(settings.model.devices, "cuda:local") != settings.model.devices.end())
      settings.model.devices = resolveLocalDevices(settings.model.devices, env, engine::runtimeInfo().cudaDeviceCount);
    const std::string path = shardSessionPath(*session, shard);
    const int status = evaluateIntoSession(
        settings, path, *overwrite ? session::OpenMode::Overwrite : session::OpenMode::CreateNew, report);
    if (status != 0 || settings.passBars.empty()) return status;
    if (shard.count > 1) {  // one shard's prompts are not the evaluation the bars are about
      logText("eval", LogLevel::Info, "pass bars recorded: check them on the merged session (dflash-eval gate)");
      return status;
    }
    return gateSession(path, {.json = report.progress == ProgressStyle::Json});
  });
}

}  // namespace dfi::eval
