#pragma once
// A number with a fixed count of decimals ("%.*f"), as the text reports print their figures.

#include <cstdio>
#include <string>

namespace dfi::analysis::detail {

inline std::string fixed(double value, int digits = 3) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

}  // namespace dfi::analysis::detail
