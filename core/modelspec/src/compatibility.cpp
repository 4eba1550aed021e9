#include "dfi/modelspec/compatibility.h"

#include "dfi/base/error.h"
#include "dfi/tensorfile/shape_text.h"

namespace dfi::modelspec {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

class ReportBuilder {
 public:
  void error(std::string field, std::string drafterValue, std::string targetValue, std::string message) {
    add(Severity::Error, std::move(field), std::move(drafterValue), std::move(targetValue), std::move(message));
  }
  void warning(std::string field, std::string drafterValue, std::string targetValue, std::string message) {
    add(Severity::Warning, std::move(field), std::move(drafterValue), std::move(targetValue), std::move(message));
  }
  CompatibilityReport take() { return std::move(report_); }

 private:
  void add(Severity s, std::string field, std::string d, std::string t, std::string message) {
    report_.issues.push_back({std::move(field), std::move(d), std::move(t), std::move(message), s});
  }
  CompatibilityReport report_;
};

void checkWidths(const DrafterConfig& d, const TargetConfig& t, const CheckpointFacts& facts, ReportBuilder& r) {
  if (d.hiddenSize != t.hiddenSize)
    r.error("hidden_size", str(d.hiddenSize), str(t.hiddenSize),
            "the drafter runs on the target's token embeddings and feeds the target's LM head, "
            "so its hidden size must equal the target's");
  if (d.targetHiddenSize && *d.targetHiddenSize != t.hiddenSize)
    r.error("target_hidden_size", str(*d.targetHiddenSize), str(t.hiddenSize),
            "the drafter declares a target hidden size the target does not have");
  if (!facts.drafterFcWeightShape) return;
  const std::vector<std::int64_t>& fc = *facts.drafterFcWeightShape;
  const std::int64_t taps = static_cast<std::int64_t>(d.targetLayerIds.size());
  const std::int64_t expectedIn = taps * t.hiddenSize;
  if (fc.size() != 2) {
    r.error("fc.weight", tensorfile::shapeToString(fc), tensorfile::shapeToString({d.hiddenSize, expectedIn}),
            "fc.weight must be a matrix [drafter hidden, taps x target hidden]");
    return;
  }
  if (fc[1] != expectedIn)
    r.error("fc.weight", tensorfile::shapeToString(fc),
            str(taps) + " taps x hidden " + str(t.hiddenSize) + " = " + str(expectedIn),
            "fc input width must be the number of target layer taps times the target hidden size");
  if (fc[0] != d.hiddenSize)
    r.error("fc.weight", tensorfile::shapeToString(fc), "drafter hidden_size " + str(d.hiddenSize),
            "fc output width must be the drafter's hidden size");
}

// The fields as the drafter's own config.json names them (speculators nests the layer's fields
// and counts its taps from the embedding output).
bool isSpeculators(const DrafterConfig& d) { return d.format == DrafterFormat::Speculators; }
std::string tapsField(const DrafterConfig& d) {
  if (isSpeculators(d)) return "aux_hidden_state_layer_ids";
  return d.targetLayerIdsFromConfig ? "dflash_config.target_layer_ids" : "target_layer_ids (default rule)";
}
std::string tapText(const DrafterConfig& d, int tap) {
  return isSpeculators(d) ? str(tap + 1) + " (tap " + str(tap) + ")" : str(tap);
}

void checkTaps(const DrafterConfig& d, const TargetConfig& t, ReportBuilder& r) {
  for (std::size_t i = 0; i < d.targetLayerIds.size(); ++i) {
    const int id = d.targetLayerIds[i];
    const std::string field = tapsField(d) + "[" + std::to_string(i) + "]";
    if (id >= t.numHiddenLayers) {
      r.error(field, tapText(d, id), "num_hidden_layers " + str(t.numHiddenLayers),
              "tap " + str(id) + " names a layer the target does not have (layers are 0.." +
                  str(t.numHiddenLayers - 1) + ")");
    } else if (id == t.numHiddenLayers - 1) {
      // transformers' last hidden_states entry is the final-normed output, not the raw
      // output of the last layer, so taps there differ between HF and raw-output engines.
      r.warning(field, tapText(d, id), "num_hidden_layers " + str(t.numHiddenLayers),
                "shortcut tap: the last target layer; transformers' hidden_states[L] is post-norm, "
                "so this feature depends on which convention training used");
    }
  }
  if (d.numTargetLayers > 0 && d.numTargetLayers != t.numHiddenLayers)
    r.warning("num_target_layers", str(d.numTargetLayers), "num_hidden_layers " + str(t.numHiddenLayers),
              "the drafter was configured for a target of a different depth");
}

void checkVocabulary(const DrafterConfig& d, const TargetConfig& t, const CheckpointFacts& facts, ReportBuilder& r) {
  const std::int64_t rows = facts.targetEmbeddingRows.value_or(t.vocabSize);
  const std::string rowsText = facts.targetEmbeddingRows ? "embed_tokens rows " + str(rows) : "vocab_size " + str(rows);
  const std::string maskField = isSpeculators(d) ? "mask_token_id" : "dflash_config.mask_token_id";
  const std::string vocabField = isSpeculators(d) ? "transformer_layer_config.vocab_size" : "vocab_size";
  if (!d.maskTokenId) {
    r.error(maskField, "absent", rowsText, "the drafter needs a mask token id to fill the masked block slots");
  } else if (*d.maskTokenId >= rows) {
    r.error(maskField, str(*d.maskTokenId), rowsText,
            "the mask embedding is a row of the target's embedding table, and this id is past its end");
  }
  if (facts.targetEmbeddingRows && *facts.targetEmbeddingRows != t.vocabSize)
    r.error("vocab_size", str(d.vocabSize), "vocab_size " + str(t.vocabSize) + " but " + rowsText,
            "the target checkpoint's embedding table disagrees with its own config");
  if (d.vocabSize != t.vocabSize)
    r.error(vocabField, str(d.vocabSize), str(t.vocabSize),
            "the drafter was trained against a different vocabulary (another target family?)");
}

}  // namespace

std::string_view severityName(Severity severity) {
  return severity == Severity::Error ? "error" : "warning";
}

std::size_t CompatibilityReport::count(Severity severity) const {
  std::size_t n = 0;
  for (const CompatibilityIssue& issue : issues) n += issue.severity == severity;
  return n;
}

void CompatibilityReport::throwIfIncompatible(const std::string& drafterOrigin,
                                              const std::string& targetOrigin) const {
  if (compatible()) return;
  std::string text = "drafter " + drafterOrigin + " does not fit target " + targetOrigin + " (" +
                     std::to_string(count(Severity::Error)) + " error(s)):";
  for (const CompatibilityIssue& issue : issues) {
    if (issue.severity != Severity::Error) continue;
    text.append("\n  ").append(issue.field).append(": drafter ").append(issue.drafterValue);
    text.append(", target ").append(issue.targetValue).append(": ").append(issue.message);
  }
  throw ValidationError(text, ErrorContext{.file = drafterOrigin});
}

CompatibilityReport checkCompatibility(const DrafterConfig& drafter, const TargetConfig& target,
                                       const CheckpointFacts& facts) {
  ReportBuilder report;
  checkWidths(drafter, target, facts, report);
  checkTaps(drafter, target, report);
  checkVocabulary(drafter, target, facts, report);
  return report.take();
}

}  // namespace dfi::modelspec
