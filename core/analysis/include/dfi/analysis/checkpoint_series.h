#pragma once
// The checkpoints of a drafter's training run, in step order, as the training packages lay
// their output folders out:
//   - SpecForge 0.2.0: <run_id>-step<N>/ (its <run_id>-latest and -best links alias one of them);
//     a folder holding only training_state.pt is SpecForge's resumable state, not a drafter:
//     it is listed, not loadable, with the export command that makes one;
//   - speculators 0.9.0: <E>/ per epoch, saved with save_pretrained, and a descriptive link
//     epoch<E>_step<N> -> <E> that gives its step (checkpoint_best aliases one of them);
//   - Hugging Face Trainer: checkpoint-<N>/ (trainer_state.json's global_step);
//   - z-lab-style and hand-made folders: step40000, step_40000, step40k, ckpt-2.5m, ...
// A folder's step is trainer_state.json's global_step when it has one, else the number its
// name (or a descriptive link's name) carries after "step" or "checkpoint-", else its name
// when it is a plain integer (an epoch). Links that alias a listed folder are dropped.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dfi::analysis {

struct SeriesCheckpoint {
  std::filesystem::path dir;
  std::int64_t step = 0;
  std::string stepSource;  // "trainer_state.json", "name", "link epoch0_step16626", "epoch number"
};

// The step a checkpoint folder's name carries: "step40000", "run1-step40000", "step_40k",
// "checkpoint-40000", "epoch0_step16626", "ckpt-2.5m" (k = 1e3, m = 1e6); nullopt otherwise.
std::optional<std::int64_t> stepFromName(std::string_view name);

// Every checkpoint folder directly under `folder` (a drafter's config.json or SpecForge's
// training_state.pt; loadable or not: checkpointProblem), ascending by step (ties by name). Throws dfi::IoError naming the
// folder when it cannot be listed, dfi::ValidationError when it holds no checkpoint folder.
std::vector<SeriesCheckpoint> discoverCheckpoints(const std::filesystem::path& folder);

// Why `dir` cannot be loaded as a drafter yet (empty when it can: config.json that parses,
// complete safetensors): half-written, what watch waits on while a trainer is still writing it,
// or SpecForge's training state. Reads every safetensors header: asked only of the checkpoints a
// command is about to evaluate.
std::string checkpointProblem(const std::filesystem::path& dir);

}  // namespace dfi::analysis
