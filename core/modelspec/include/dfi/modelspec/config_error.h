#pragma once
// A config that parses as JSON but is not a valid model config. Parsing collects every
// problem before throwing, so one run of `dflash-eval info` shows all of them; each names
// the JSON path of the field (e.g. `text_config.rope_parameters.rope_theta`).

#include <string>
#include <vector>

#include "dfi/base/error.h"

namespace dfi::modelspec {

struct ConfigProblem {
  std::string field;    // JSON path, e.g. "text_config.num_key_value_heads"
  std::string message;  // what is wrong, with the values involved
};

class ConfigValidationError : public ValidationError {
 public:
  ConfigValidationError(const std::string& file, std::vector<ConfigProblem> problems);
  const std::vector<ConfigProblem>& problems() const noexcept { return problems_; }

 private:
  std::vector<ConfigProblem> problems_;
};

}  // namespace dfi::modelspec
