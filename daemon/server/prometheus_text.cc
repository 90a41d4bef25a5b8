#include "daemon/server/prometheus_text.h"

#include <cmath>
#include <cstdio>

namespace codexd::server {
namespace {

std::string number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f", value);
    return text;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

std::string labels_text(const Labels& labels) {
  if (labels.empty()) return {};
  std::string text = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) text += ',';
    text += labels[i].first + "=\"" + escape_label_value(labels[i].second) + "\"";
  }
  return text + "}";
}

}  // namespace

std::string escape_label_value(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void PrometheusText::family(const std::string& name, const std::string& type, const std::string& help) {
  text_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void PrometheusText::sample(const std::string& name, double value, const Labels& labels) {
  text_ += name + labels_text(labels) + " " + number(value) + "\n";
}

void PrometheusText::single(const std::string& name, const std::string& type, const std::string& help, double value,
                            const Labels& labels) {
  family(name, type, help);
  sample(name, value, labels);
}

void PrometheusText::histogram(const std::string& name, const Histogram& histogram, const Labels& labels) {
  const auto& bounds = histogram.bounds();
  for (size_t i = 0; i <= bounds.size(); ++i) {
    Labels with_le = labels;
    with_le.emplace_back("le", i < bounds.size() ? number(bounds[i]) : "+Inf");
    sample(name + "_bucket", static_cast<double>(histogram.cumulative(i)), with_le);
  }
  sample(name + "_sum", histogram.sum(), labels);
  sample(name + "_count", static_cast<double>(histogram.count()), labels);
}

}  // namespace codexd::server
