// Per-command evaluation cost with 10 and 10,000 rules, and load time of a 10,000-rule file.
#include <benchmark/benchmark.h>

#include <string>

#include "policies/loader.h"

namespace {

using codexd::policy::LoadResult;

// n rules over n/5 programs, with alternatives and decisions mixed like real files.
std::string make_rules(int n) {
  std::string text;
  const char* decisions[] = {"allow", "prompt", "forbidden"};
  for (int i = 0; i < n; ++i) {
    text += "prefix_rule(pattern=[\"tool" + std::to_string(i % (n / 5 + 1)) + "\", [\"sub" + std::to_string(i % 7) +
            "\", \"alt\"], \"x\"], decision=\"" + decisions[i % 3] + "\")\n";
  }
  return text;
}

void BM_Check(benchmark::State& state) {
  LoadResult r = codexd::policy::load_policy_text("bench.rules", make_rules(static_cast<int>(state.range(0))));
  if (!r.ok()) {
    state.SkipWithError("load failed");
    return;
  }
  codexd::policy::MatchOptions options;
  std::vector<std::string> argv = {"tool1", "sub1", "x", "--flag"};
  for (auto _ : state) benchmark::DoNotOptimize(r.policy->check(argv, options));
}
BENCHMARK(BM_Check)->Arg(10)->Arg(10000);

void BM_CheckResolvingHostExecutable(benchmark::State& state) {
  LoadResult r = codexd::policy::load_policy_text("bench.rules", make_rules(static_cast<int>(state.range(0))));
  codexd::policy::MatchOptions options;
  options.resolve_host_executables = true;
  options.cwd = "/work";
  std::vector<std::string> argv = {"/usr/bin/tool1", "sub1", "x"};
  for (auto _ : state) benchmark::DoNotOptimize(r.policy->check(argv, options));
}
BENCHMARK(BM_CheckResolvingHostExecutable)->Arg(10)->Arg(10000);

void BM_Load(benchmark::State& state) {
  std::string text = make_rules(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(codexd::policy::load_policy_text("bench.rules", text));
}
BENCHMARK(BM_Load)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
