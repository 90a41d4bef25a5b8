// The Prometheus text exposition format (version 0.0.4), written one family at a time:
// HELP and TYPE once per metric name, label values escaped (\\, \", \n).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/histogram.h"

namespace codexd::server {

using Labels = std::vector<std::pair<std::string, std::string>>;

class PrometheusText {
 public:
  // One family: its HELP and TYPE ("counter", "gauge", "histogram"), then its samples.
  void family(const std::string& name, const std::string& type, const std::string& help);
  void sample(const std::string& name, double value, const Labels& labels = {});
  // A family of one sample: family() then sample().
  void single(const std::string& name, const std::string& type, const std::string& help, double value,
              const Labels& labels = {});
  // The _bucket/_sum/_count samples of a histogram family declared with family(.., "histogram").
  void histogram(const std::string& name, const Histogram& histogram, const Labels& labels = {});

  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

std::string escape_label_value(const std::string& value);

}  // namespace codexd::server
