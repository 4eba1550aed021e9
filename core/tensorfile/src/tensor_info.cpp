#include "dfi/tensorfile/tensor_info.h"

namespace dfi::tensorfile {

// The reader has checked that the product fits in an int64 (tensorByteSize).
std::int64_t TensorInfo::numel() const {
  std::int64_t count = 1;
  for (auto dim : shape) count *= dim;
  return count;
}

}  // namespace dfi::tensorfile
