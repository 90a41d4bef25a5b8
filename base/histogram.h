// A Prometheus-style histogram: cumulative counts of observations at or below each bound, a
// sum and a count. Not thread-safe: each one has an owning thread (the core thread in the
// daemon); readers copy it there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace codexd {

class Histogram {
 public:
  // `bounds`: increasing upper bounds; an implicit +Inf bucket follows.
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

  void observe(double value) {
    size_t i = 0;
    while (i < bounds_.size() && value > bounds_[i]) ++i;
    ++counts_[i];
    sum_ += value;
    ++count_;
  }

  const std::vector<double>& bounds() const { return bounds_; }
  // Observations at or below bounds()[i] (i == bounds().size(): all of them).
  uint64_t cumulative(size_t i) const {
    uint64_t total = 0;
    for (size_t b = 0; b <= i && b < counts_.size(); ++b) total += counts_[b];
    return total;
  }
  double sum() const { return sum_; }
  uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative
  double sum_ = 0;
  uint64_t count_ = 0;
};

// Seconds, from a fast spawn (~1 ms) to a slow sandbox start or a long approval wait.
inline std::vector<double> latency_buckets_seconds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
}

}  // namespace codexd
