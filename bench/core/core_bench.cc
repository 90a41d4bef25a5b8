// core_bench: what the daemon costs on top of running a process, against a running codexd
// (bench/core/run.sh starts one). Medians over --iterations rounds, measured round-robin so the
// ratios share the same machine state:
//   baseline        posix_spawn + wait of /bin/true in this process
//   gRPC exec       ExecCommand argv=["/bin/true"] round trip (the exit is reported inline)
//   codexctl exec   `codexctl exec -- /bin/true`, the whole client process
// and streaming throughput of `head -c 256M /dev/zero`: a plain pipe read vs a lossless Attach.
// Prints numbers and ratios; asserts nothing.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_csv.h"
#include "codexd/v1/exec.grpc.pb.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string socket;
  std::string codexctl;
  std::string workdir;
  int iterations = 200;
  int stream_runs = 3;
  uint64_t stream_bytes = 256ull * 1024 * 1024;
  bool exec_only = false;  // just the gRPC round trip (the sandboxed figure)
  std::string label;
  std::string figure = "unsandboxed";  // names this run's rows in CODEXD_BENCH_CSV
};

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// posix_spawn + wait, stdin and stdout on /dev/null.
int spawn_and_wait(const std::vector<std::string>& argv) {
  std::vector<char*> a;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, a[0], &actions, nullptr, a.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Bytes per second of reading `argv`'s stdout through a plain pipe to EOF.
double pipe_throughput(const std::vector<std::string>& argv, uint64_t* bytes_out) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return 0;
  std::vector<char*> a;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, p[1], 1);
  auto start = Clock::now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, a[0], &actions, nullptr, a.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(p[1]);
  if (rc != 0) {
    close(p[0]);
    return 0;
  }
  std::vector<char> buf(64 * 1024);
  uint64_t total = 0;
  ssize_t n;
  while ((n = read(p[0], buf.data(), buf.size())) > 0) total += static_cast<uint64_t>(n);
  close(p[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  double seconds = ms_since(start) / 1000.0;
  *bytes_out = total;
  return static_cast<double>(total) / seconds;
}

class Bench {
 public:
  explicit Bench(Options options) : o_(std::move(options)) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 * 1024 * 1024);
    stub_ = codexd::v1::Exec::NewStub(
        grpc::CreateCustomChannel("unix:" + o_.socket, grpc::InsecureChannelCredentials(), args));
  }

  // One ExecCommand of /bin/true; false on any failure.
  bool grpc_exec_true() {
    codexd::v1::ExecCommandRequest request;
    request.add_argv("/bin/true");
    request.set_workdir(o_.workdir);
    codexd::v1::ExecResult result;
    grpc::ClientContext context;
    auto status = stub_->ExecCommand(&context, request, &result);
    if (!status.ok() || !result.has_exit_code() || result.exit_code() != 0) {
      std::fprintf(stderr, "ExecCommand failed: %s %s\n", status.error_message().c_str(), result.text().c_str());
      return false;
    }
    return true;
  }

  // One unary RPC that starts nothing (ListSessions of an owner with none): the RPC's own share
  // of the floor "posix_spawn + one unary RPC".
  bool grpc_list_sessions() {
    codexd::v1::ListSessionsRequest request;
    codexd::v1::ListSessionsResponse response;
    grpc::ClientContext context;
    return stub_->ListSessions(&context, request, &response).ok();
  }

  int run() {
    const std::vector<std::string> true_argv = {"/bin/true"};
    const std::vector<std::string> ctl_argv = {o_.codexctl, "--socket", o_.socket, "exec", "-C", o_.workdir, "--", "/bin/true"};
    // Warm up: connection, page cache, the daemon's first spawn.
    for (int i = 0; i < 5; ++i) {
      spawn_and_wait(true_argv);
      if (!grpc_exec_true()) return 1;
      if (!o_.exec_only && spawn_and_wait(ctl_argv) != 0) {
        std::fprintf(stderr, "codexctl exec failed\n");
        return 1;
      }
    }
    std::vector<double> base, unary, grpc, ctl;
    for (int i = 0; i < o_.iterations; ++i) {
      auto t = Clock::now();
      spawn_and_wait(true_argv);
      base.push_back(ms_since(t));
      t = Clock::now();
      if (!grpc_list_sessions()) return 1;
      unary.push_back(ms_since(t));
      t = Clock::now();
      if (!grpc_exec_true()) return 1;
      grpc.push_back(ms_since(t));
      if (!o_.exec_only) {
        t = Clock::now();
        spawn_and_wait(ctl_argv);
        ctl.push_back(ms_since(t));
      }
    }
    const double b = median(base);
    std::printf("%s: medians over %d iterations\n", o_.label.c_str(), o_.iterations);
    std::printf("  %-44s %9.3f ms  %7.2fx\n", "(a) posix_spawn+wait /bin/true (baseline)", b, 1.0);
    const double floor = b + median(unary);
    std::printf("  %-44s %9.3f ms\n", "    one unary RPC (ListSessions, none)", median(unary));
    std::printf("  %-44s %9.3f ms  %7.2fx  (%.2fx posix_spawn + one unary RPC)\n", "(b) gRPC ExecCommand argv=[/bin/true]",
                median(grpc), median(grpc) / b, median(grpc) / floor);
    namespace cb = codexd::bench;
    if (o_.figure == "unsandboxed") {
      cb::append_csv_row("ExecCommand /bin/true unsandboxed", median(grpc), "ms", "posix_spawn + one unary RPC", floor, "<=1.25x");
    } else {  // issue 14: a warm sandboxed command at most twice a bare posix_spawn
      cb::append_csv_row("ExecCommand /bin/true " + o_.figure, median(grpc), "ms", "posix_spawn", b, "<=2.0x");
    }
    if (!o_.exec_only) {
      std::printf("  %-44s %9.3f ms  %7.2fx\n", "(c) codexctl exec -- /bin/true", median(ctl), median(ctl) / b);
      cb::append_csv_row("codexctl exec -- /bin/true whole process " + o_.figure, median(ctl), "ms", "posix_spawn", b);
      return stream();
    }
    return 0;
  }

 private:
  // (d) `head -c N /dev/zero`: a plain pipe read vs a lossless Attach of the same command.
  int stream() {
    const std::string count = std::to_string(o_.stream_bytes);
    std::vector<double> pipe_rates, attach_rates;
    for (int run = 0; run < o_.stream_runs; ++run) {
      uint64_t bytes = 0;
      pipe_rates.push_back(pipe_throughput({"/usr/bin/head", "-c", count, "/dev/zero"}, &bytes));
      if (bytes != o_.stream_bytes) {
        std::fprintf(stderr, "pipe read %llu bytes\n", static_cast<unsigned long long>(bytes));
        return 1;
      }
      double rate = attach_throughput(count);
      if (rate <= 0) return 1;
      attach_rates.push_back(rate);
    }
    const double p = median(pipe_rates), a = median(attach_rates);
    std::printf("(d) streaming `head -c %s /dev/zero`, median of %d runs (GB = 1e9 bytes)\n", count.c_str(), o_.stream_runs);
    std::printf("  %-44s %9.3f GB/s %7.2fx\n", "plain pipe read (baseline)", p / 1e9, 1.0);
    std::printf("  %-44s %9.3f GB/s %7.2fx\n", "codexd Attach (lossless)", a / 1e9, a / p);
    return 0;
  }

  // The command prints one byte, then waits on a FIFO: once the watcher has that byte it is
  // registered, so the clock starts with nothing lost and nothing produced yet.
  double attach_throughput(const std::string& count) {
    const std::string fifo = o_.workdir + "/bench-go";
    unlink(fifo.c_str());
    if (mkfifo(fifo.c_str(), 0600) != 0) return 0;
    codexd::v1::ExecCommandRequest request;
    request.add_argv("/bin/sh");
    request.add_argv("-c");
    request.add_argv("printf R; read a < bench-go; exec head -c " + count + " /dev/zero");
    request.set_workdir(o_.workdir);
    request.set_yield_time_ms(250);
    codexd::v1::ExecResult result;
    {
      grpc::ClientContext context;
      auto status = stub_->ExecCommand(&context, request, &result);
      if (!status.ok() || !result.has_session_id()) {
        std::fprintf(stderr, "stream ExecCommand failed: %s %s\n", status.error_message().c_str(), result.text().c_str());
        return 0;
      }
    }
    grpc::ClientContext context;
    codexd::v1::AttachRequest attach;
    attach.set_session_id(result.session_id());
    attach.set_from_offset(0);
    attach.set_lossless(true);
    auto reader = stub_->Attach(&context, attach);
    codexd::v1::OutputEvent event;
    if (!reader->Read(&event) || !event.has_output()) return 0;
    uint64_t bytes = event.output().data().size();
    auto start = Clock::now();
    int fd = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    (void)!write(fd, "go\n", 3);
    close(fd);
    bool gap = false, exited = false;
    while (reader->Read(&event)) {
      if (event.has_output()) bytes += event.output().data().size();
      if (event.has_gap()) gap = true;
      if (event.has_exit()) exited = true;
    }
    double seconds = ms_since(start) / 1000.0;
    reader->Finish();
    unlink(fifo.c_str());
    // Reap the session (its exit is reported to this Poll).
    codexd::v1::PollRequest poll;
    poll.set_session_id(result.session_id());
    codexd::v1::ExecResult polled;
    grpc::ClientContext poll_context;
    stub_->Poll(&poll_context, poll, &polled);
    if (gap || !exited || bytes != o_.stream_bytes + 1) {
      std::fprintf(stderr, "Attach: %llu bytes, gap=%d exit=%d\n", static_cast<unsigned long long>(bytes), gap, exited);
      return 0;
    }
    return static_cast<double>(o_.stream_bytes) / seconds;
  }

  Options o_;
  std::unique_ptr<codexd::v1::Exec::Stub> stub_;
};

void usage() {
  std::fprintf(stderr,
               "usage: core_bench --socket PATH --workdir DIR [--codexctl PATH] [--iterations N] [--stream-runs N]\n"
               "                  [--stream-bytes N] [--exec-only] [--label TEXT] [--figure NAME]\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--socket") o.socket = value();
    else if (arg == "--codexctl") o.codexctl = value();
    else if (arg == "--workdir") o.workdir = value();
    else if (arg == "--iterations") o.iterations = std::atoi(value().c_str());
    else if (arg == "--stream-runs") o.stream_runs = std::atoi(value().c_str());
    else if (arg == "--stream-bytes") o.stream_bytes = std::strtoull(value().c_str(), nullptr, 10);
    else if (arg == "--exec-only") o.exec_only = true;
    else if (arg == "--label") o.label = value();
    else if (arg == "--figure") o.figure = value();
    else {
      usage();
      return 2;
    }
  }
  if (o.socket.empty() || o.workdir.empty() || (!o.exec_only && o.codexctl.empty()) || o.iterations <= 0 ||
      o.stream_runs <= 0) {
    usage();
    return 2;
  }
  if (o.label.empty()) o.label = "codexd at " + o.socket;
  return Bench(std::move(o)).run();
}
