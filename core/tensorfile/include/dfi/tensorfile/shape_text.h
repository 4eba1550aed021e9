#pragma once
// Tensor shapes as messages and reports print them: "[4096, 20480]".

#include <cstdint>
#include <string>
#include <vector>

namespace dfi::tensorfile {

std::string shapeToString(const std::vector<std::int64_t>& shape);

}  // namespace dfi::tensorfile
