#pragma once
// diagnose's lint of a reduced draft vocabulary (speculators' draft_vocab_size with d2t): the
// package copies the target's LM head rows at the mapped ids into the drafter's lm_head and
// freezes them, so rows that differ from the target's there say the mapping shipped is not the one
// the head was made with. Read from the two checkpoints' bytes, before any model is loaded.

#include <filesystem>
#include <optional>

#include "dfi/analysis/diagnosis.h"
#include "dfi/modelspec/drafter_config.h"

namespace dfi::engine {

// nullopt when the rows agree, the drafter keeps the target's vocabulary, or either head is not
// stored as floats (a quantised target head is not compared). The target's head is its lm_head,
// or its embedding when tied.
std::optional<analysis::LintFinding> draftVocabularyLint(const modelspec::DrafterConfig& drafter,
                                                         const std::filesystem::path& drafterDir,
                                                         const std::filesystem::path& targetDir);

}  // namespace dfi::engine
