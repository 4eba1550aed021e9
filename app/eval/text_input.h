#pragma once
// --text inputs of `forward` and `draft`: tokenized with the model directory's tokenizer,
// optionally wrapped as one user turn of its chat template.

#include <cstdint>
#include <string>
#include <vector>

namespace dfi::eval {

std::vector<std::int64_t> tokenizeInput(const std::string& modelDir, const std::string& text, bool chat,
                                        bool enableThinking);

}  // namespace dfi::eval
