// The exposition writer: families, label escaping, histogram samples.
#include "daemon/server/prometheus_text.h"

#include <gtest/gtest.h>

namespace codexd::server {
namespace {

TEST(PrometheusText, FamiliesSamplesAndEscapedLabelValues) {
  PrometheusText out;
  out.family("codexd_things_total", "counter", "Things.");
  out.sample("codexd_things_total", 3, {{"agent", "a\"b\\c\nd"}});
  out.sample("codexd_things_total", 0.25);
  EXPECT_EQ(out.text(),
            "# HELP codexd_things_total Things.\n"
            "# TYPE codexd_things_total counter\n"
            "codexd_things_total{agent=\"a\\\"b\\\\c\\nd\"} 3\n"
            "codexd_things_total 0.25\n");
}

TEST(PrometheusText, AHistogramHasCumulativeBucketsThenSumAndCount) {
  Histogram h({0.5, 2});
  h.observe(0.1);
  h.observe(1);
  h.observe(9);
  PrometheusText out;
  out.histogram("codexd_wait_seconds", h, {{"sandbox", "none"}});
  EXPECT_EQ(out.text(),
            "codexd_wait_seconds_bucket{sandbox=\"none\",le=\"0.5\"} 1\n"
            "codexd_wait_seconds_bucket{sandbox=\"none\",le=\"2\"} 2\n"
            "codexd_wait_seconds_bucket{sandbox=\"none\",le=\"+Inf\"} 3\n"
            "codexd_wait_seconds_sum{sandbox=\"none\"} 10.1\n"
            "codexd_wait_seconds_count{sandbox=\"none\"} 3\n");
}

}  // namespace
}  // namespace codexd::server
