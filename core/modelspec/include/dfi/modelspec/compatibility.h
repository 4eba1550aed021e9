#pragma once
// Whether a DFlash drafter fits a target, checked before any compute. Every mismatch is
// collected (not just the first), each naming the field and both values, so one look at
// the report tells what is wrong with a pairing.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dfi/modelspec/drafter_config.h"
#include "dfi/modelspec/target_config.h"

namespace dfi::modelspec {

enum class Severity { Error, Warning };

std::string_view severityName(Severity severity);

struct CompatibilityIssue {
  std::string field;         // drafter-side field, e.g. "dflash_config.target_layer_ids[4]"
  std::string drafterValue;
  std::string targetValue;
  std::string message;
  Severity severity = Severity::Error;
};

// What only the tensors can tell; absent when a checkpoint was not opened.
struct CheckpointFacts {
  std::optional<std::vector<std::int64_t>> drafterFcWeightShape;  // drafter fc.weight
  std::optional<std::int64_t> targetEmbeddingRows;                // target embed_tokens rows
};

struct CompatibilityReport {
  std::vector<CompatibilityIssue> issues;

  std::size_t count(Severity severity) const;
  bool compatible() const { return count(Severity::Error) == 0; }
  // Throws ValidationError listing every error (warnings do not stop a run).
  void throwIfIncompatible(const std::string& drafterOrigin, const std::string& targetOrigin) const;
};

CompatibilityReport checkCompatibility(const DrafterConfig& drafter, const TargetConfig& target,
                                       const CheckpointFacts& facts = {});

}  // namespace dfi::modelspec
