#!/usr/bin/env python3
"""Measures the policy-loading figures of bench/policy/run.sh and prints them (see run.sh)."""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import time

LARGE_RULES = 10000


def write_rules(work):
    tiny = os.path.join(work, "tiny.rules")
    with open(tiny, "w") as f:
        f.write('prefix_rule(pattern=["tool1", "sub1"], decision="prompt")\n')
    large = os.path.join(work, "large.rules")
    with open(large, "w") as f:  # the file of compare_codex.sh: 10,000 rules over 2,001 programs
        for i in range(LARGE_RULES):
            f.write('prefix_rule(pattern=["tool%d", ["sub%d", "alt"], "x"], decision="%s")\n'
                    % (i % 2001, i % 7, ("allow", "prompt", "forbidden")[i % 3]))
    return tiny, large


def run_process(cmd, runs, env):
    """Median wall ms, median CPU (user+sys) ms and the peak RSS (MiB) of `runs` runs."""
    walls, cpus, peak_kib = [], [], 0
    for _ in range(runs):
        start = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        walls.append((time.perf_counter() - start) * 1000)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise SystemExit("failed (%d): %s" % (child.returncode, " ".join(cmd)))
        cpus.append((usage.ru_utime + usage.ru_stime) * 1000)
        peak_kib = max(peak_kib, usage.ru_maxrss)  # of the child and its waited-for children
    return statistics.median(walls), statistics.median(cpus), peak_kib / 1024


def policy_bench(build):
    exe = os.path.join(build, "bench", "policy", "policy_bench")
    out = subprocess.run([exe, "--benchmark_filter=BM_Load|BM_Check/", "--benchmark_format=json",
                          "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true"],
                         check=True, capture_output=True, text=True).stdout
    figures = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0}[b["time_unit"]]
            figures[b["run_name"]] = b["real_time"] * scale  # ms
    return figures


def daemon_reloads(build, work, large, reloads=10):
    """Starts codexd in user mode on the 10,000-rule file, sends SIGHUP `reloads` times and
    reads the reload durations it logs. Returns the median in ms (None when it cannot)."""
    home = os.path.join(work, "daemon-home")
    rules_dir = os.path.join(home, ".config", "codexd", "rules")
    os.makedirs(rules_dir)
    os.symlink(large, os.path.join(rules_dir, "large.rules"))  # beside the shipped default.rules
    runtime = os.path.join(work, "run")
    os.makedirs(runtime, mode=0o700)
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"), XDG_RUNTIME_DIR=runtime)
    log_path = os.path.join(work, "codexd.log")
    with open(log_path, "w") as log:
        daemon = subprocess.Popen([os.path.join(build, "bin", "codexd"), "--mode", "user", "--log-level", "info",
                                   "--listen", "unix:" + os.path.join(runtime, "codexd.sock")],
                                  stdout=log, stderr=log, env=env)
    pattern = re.compile(r"policy: reload done in ([0-9.]+) ms \((\d+) rules\)")
    try:
        if not wait_for_log(log_path, pattern, 1, daemon):
            return None
        for n in range(2, reloads + 2):
            daemon.send_signal(signal.SIGHUP)
            if not wait_for_log(log_path, pattern, n, daemon):
                return None
        with open(log_path) as f:
            times = [float(m.group(1)) for m in pattern.finditer(f.read()) if int(m.group(2)) >= LARGE_RULES]
        return statistics.median(times[1:]) if len(times) > 1 else None  # [0] is the start-up load
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)


def wait_for_log(path, pattern, count, daemon, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(path) as f:
            if len(pattern.findall(f.read())) >= count:
                return True
        if daemon.poll() is not None:
            return False
        time.sleep(0.05)
    return False


class Report:
    def __init__(self, csv_path):
        self.csv_path = csv_path

    def figure(self, name, value, unit, reference="", reference_value=None, ratio=None, goal=""):
        text = "%-44s %10.3f %-4s" % (name, value, unit)
        if reference:
            text += "  %s %.3f  ratio %.2f" % (reference, reference_value, ratio)
        if goal:
            text += "  (goal: %s)" % goal
        print(text)
        if self.csv_path:
            fields = [name, "%.3f" % value, unit, reference,
                      "" if reference_value is None else "%.3f" % reference_value,
                      "" if ratio is None else "%.3f" % ratio, goal]
            with open(self.csv_path, "a") as f:
                f.write(",".join(field.replace(",", ";") for field in fields) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--codex", default="")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--work", required=True)
    parser.add_argument("--daemon", default="0")
    args = parser.parse_args()
    report = Report(os.environ.get("CODEXD_BENCH_CSV", ""))
    tiny, large = write_rules(args.work)
    codexctl = os.path.join(args.build, "bin", "codexctl")
    env = dict(os.environ)
    command = ["--", "tool1", "sub1", "x"]
    print("policy loading: median of %d runs (wall and CPU ms), peak RSS over the runs" % args.runs)

    floor = run_process([codexctl, "policy", "check", "--rules", tiny] + command, args.runs, env)
    ours = run_process([codexctl, "policy", "check", "--rules", large] + command, args.runs, env)
    report.figure("codexctl_policy_check_tiny_wall", floor[0], "ms", goal="whole-process floor")
    report.figure("codexctl_policy_check_tiny_cpu", floor[1], "ms")
    report.figure("codexctl_policy_check_tiny_peak_rss", floor[2], "MiB")
    if args.codex and os.access(args.codex, os.X_OK):
        codex_env = dict(env, HOME=os.environ.get("CODEX_HOME_DIR", "/opt/codex-home"))
        theirs = run_process([args.codex, "execpolicy", "check", "--rules", large] + command, args.runs, codex_env)
        report.figure("codexctl_policy_check_10k_wall", ours[0], "ms", "codex_execpolicy_check_10k_wall", theirs[0],
                      theirs[0] / ours[0], ">=5x (codex/ours)")
        report.figure("codexctl_policy_check_10k_cpu", ours[1], "ms", "codex_execpolicy_check_10k_cpu", theirs[1],
                      theirs[1] / ours[1], ">=5x (codex/ours)")
        report.figure("codexctl_policy_check_10k_peak_rss", ours[2], "MiB", "codex_execpolicy_check_10k_peak_rss",
                      theirs[2], theirs[2] / ours[2], "lower than codex (ratio > 1)")
    else:
        print("(no codex binary: set CODEX or pass CODEX_BIN for the reference figures)")
        report.figure("codexctl_policy_check_10k_wall", ours[0], "ms")
        report.figure("codexctl_policy_check_10k_cpu", ours[1], "ms")
        report.figure("codexctl_policy_check_10k_peak_rss", ours[2], "MiB")
    report.figure("codexctl_policy_check_10k_minus_floor_wall", ours[0] - floor[0], "ms", goal="the rules part")

    bench = policy_bench(args.build)
    report.figure("policy_load_10k_in_process", bench["BM_Load/10000"], "ms")
    check10, check10k = bench["BM_Check/10"] * 1e6, bench["BM_Check/10000"] * 1e6
    report.figure("policy_check_10_rules", check10, "ns")
    report.figure("policy_check_10000_rules", check10k, "ns", "policy_check_10_rules", check10, check10k / check10,
                  "~1 (O(rules for the program))")
    if args.daemon == "1":
        reload_ms = daemon_reloads(args.build, args.work, large)
        if reload_ms is None:
            print("(codexd reload: no figure; see the daemon log)")
        else:
            report.figure("codexd_reload_10k", reload_ms, "ms", goal="<20 ms")


if __name__ == "__main__":
    main()
