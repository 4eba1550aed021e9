#pragma once
// What the GUI benchmarks time with: a QElapsedTimer's reading in milliseconds, and the median of
// repeated timings (a loaded machine's outliers do not move it).

#include <algorithm>
#include <vector>

#include <QElapsedTimer>

namespace dfi::bench {

inline double ms(const QElapsedTimer& timer) { return static_cast<double>(timer.nsecsElapsed()) * 1e-6; }

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace dfi::bench
