#include "dfi/base/version.h"

namespace dfi {

std::string version() { return DFI_VERSION_STRING; }

std::string gitHash() {
  return
#include "dfi/git_hash.inc"
      ;
}

}  // namespace dfi
