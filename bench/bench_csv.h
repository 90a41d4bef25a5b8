// One row per figure for bench/run-all.sh: when CODEXD_BENCH_CSV names a file, each bench
// appends `figure,value,unit,reference,reference_value,ratio,goal` to it (no header, no
// quoting: fields never hold commas). ratio = value / reference_value; goal is text such as
// "<=2.0x" or ">=0.8x", or empty.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace codexd::bench {

inline void append_csv_row(const std::string& figure, double value, const std::string& unit,
                           const std::string& reference, double reference_value, const std::string& goal = "") {
  const char* path = std::getenv("CODEXD_BENCH_CSV");
  if (path == nullptr || *path == '\0') return;
  std::FILE* out = std::fopen(path, "a");
  if (out == nullptr) return;
  const double ratio = reference_value > 0 ? value / reference_value : 0;
  std::fprintf(out, "%s,%.4f,%s,%s,%.4f,%.3f,%s\n", figure.c_str(), value, unit.c_str(), reference.c_str(),
               reference_value, ratio, goal.c_str());
  std::fclose(out);
}

}  // namespace codexd::bench
