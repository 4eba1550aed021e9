#include "dfi/tensorfile/shape_text.h"

namespace dfi::tensorfile {

std::string shapeToString(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

}  // namespace dfi::tensorfile
