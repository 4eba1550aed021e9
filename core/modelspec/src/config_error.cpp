#include "dfi/modelspec/config_error.h"

namespace dfi::modelspec {
namespace {

std::string describe(const std::vector<ConfigProblem>& problems) {
  if (problems.size() == 1) return problems.front().message;
  std::string text = std::to_string(problems.size()) + " problems in the config:";
  for (const ConfigProblem& p : problems) text.append("\n  ").append(p.field).append(": ").append(p.message);
  return text;
}

// With a single problem the field goes into the context ("file: field: message"); with
// several, each line carries its own field.
ErrorContext contextFor(const std::string& file, const std::vector<ConfigProblem>& problems) {
  return ErrorContext{.file = file, .item = problems.size() == 1 ? problems.front().field : ""};
}

}  // namespace

ConfigValidationError::ConfigValidationError(const std::string& file,
                                             std::vector<ConfigProblem> problems)
    : ValidationError(describe(problems), contextFor(file, problems)),
      problems_(std::move(problems)) {}

}  // namespace dfi::modelspec
