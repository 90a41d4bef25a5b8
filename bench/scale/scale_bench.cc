// scale_bench: issue 14 goals 5 (output) and 6 (scale) against a running codexd
// (bench/scale/run.sh starts the daemons). Phases:
//   --phase output   (a) `head -c N /dev/zero` through a lossless Attach vs a plain pipe read,
//                    (b) the same on a terminal (tty=true) vs a bare PTY read (openpty),
//                    (c) one Poll, waiting when a command writes a 1 MiB burst: bytes and time
//   --phase waiting  (d) many concurrent long Polls and Attach streams on a few sessions: the
//                    daemon's threads, RSS and open descriptors before and while they wait
//   --phase clients  (e) N concurrent clients (--clients 8,32: each count in turn) each running
//                    ExecCommand /bin/true: commands/s, errors, and the daemon's threads, RSS and
//                    open descriptors at their peak during the load and after it
// Prints a table of medians and ratios; with CODEXD_BENCH_CSV=FILE also appends one row per
// figure: figure,value,unit,reference,reference_value,ratio,goal. Asserts nothing.
#include <dirent.h>
#include <fcntl.h>
#include <pty.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "codexd/v1/exec.grpc.pb.h"

extern char** environ;

namespace {

namespace v1 = codexd::v1;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string socket;
  std::string workdir;
  std::string phase;
  pid_t daemon_pid = 0;
  int runs = 3;
  uint64_t pipe_bytes = 256ull << 20;
  uint64_t pty_bytes = 64ull << 20;
  int sessions = 50;
  int polls = 1000;
  int attaches = 200;
  std::vector<int> clients = {8};
  int commands_per_client = 100;
  std::string label;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One figure: printed as a table row, and appended to $CODEXD_BENCH_CSV when set.
struct Figure {
  std::string name;
  double value;
  std::string unit;
  std::string reference;  // "" when the figure has none
  double reference_value;
  std::string goal;
};

std::string no_commas(std::string s) {
  std::replace(s.begin(), s.end(), ',', ';');
  return s;
}

void report(const Figure& f) {
  const bool has_ref = !f.reference.empty() && f.reference_value > 0;
  const double ratio = has_ref ? f.value / f.reference_value : 0;
  std::string ref = has_ref ? f.reference : "-";
  if (has_ref) {
    std::printf("  %-46s %12.3f %-7s | %-30s %12.3f | %6.2fx | %s\n", f.name.c_str(), f.value, f.unit.c_str(), ref.c_str(),
                f.reference_value, ratio, f.goal.c_str());
  } else {
    std::printf("  %-46s %12.3f %-7s | %-30s %12s | %7s | %s\n", f.name.c_str(), f.value, f.unit.c_str(), "-", "-", "-",
                f.goal.c_str());
  }
  if (const char* csv = std::getenv("CODEXD_BENCH_CSV"); csv && *csv) {
    if (FILE* out = std::fopen(csv, "a")) {
      std::fprintf(out, "%s,%.6g,%s,%s,%.6g,%.4g,%s\n", no_commas(f.name).c_str(), f.value, no_commas(f.unit).c_str(),
                   has_ref ? no_commas(f.reference).c_str() : "", has_ref ? f.reference_value : 0.0, ratio,
                   no_commas(f.goal).c_str());
      std::fclose(out);
    }
  }
}

void table_header(const std::string& title) {
  std::printf("%s\n  %-46s %12s %-7s | %-30s %12s | %7s | %s\n", title.c_str(), "figure", "value", "unit", "reference",
              "ref value", "ratio", "goal");
}

// The daemon's load figures: threads and RSS (/proc/PID/status), open descriptors (/proc/PID/fd).
struct ProcStatus {
  long threads = 0;
  long rss_kib = 0;
  long fds = 0;
};
long open_fds(pid_t pid) {
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (dir == nullptr) return 0;
  long n = 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n;
}
ProcStatus read_status(pid_t pid) {
  ProcStatus s;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) s.threads = std::atol(line.c_str() + 8);
    if (line.rfind("VmRSS:", 0) == 0) s.rss_kib = std::atol(line.c_str() + 6);
  }
  s.fds = open_fds(pid);
  return s;
}
ProcStatus peak_of(const ProcStatus& a, const ProcStatus& b) {
  return {std::max(a.threads, b.threads), std::max(a.rss_kib, b.rss_kib), std::max(a.fds, b.fds)};
}

// Three rows (threads, RSS, descriptors) for the daemon in state `what`, each against `ref`
// (`ref_name` empty: no reference).
void report_load(const std::string& prefix, const std::string& what, const ProcStatus& s, const std::string& ref_name,
                 const ProcStatus& ref) {
  report({prefix + " daemon threads: " + what, static_cast<double>(s.threads), "threads", ref_name,
          static_cast<double>(ref.threads), "fixed"});
  report({prefix + " daemon RSS: " + what, s.rss_kib / 1024.0, "MiB", ref_name, ref.rss_kib / 1024.0, "-"});
  report({prefix + " daemon fds: " + what, static_cast<double>(s.fds), "fds", ref_name, static_cast<double>(ref.fds), "-"});
}

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> a;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  return a;
}

// Bytes per second of reading `argv`'s stdout to the end through `read_fd`, the parent's end of
// what `child_fd` (the child's stdout) is connected to: a pipe or a PTY.
double read_throughput(const std::vector<std::string>& argv, int read_fd, int child_fd, bool new_session,
                       uint64_t* bytes_out) {
  auto a = c_argv(argv);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_fd, 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (new_session) posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  auto start = Clock::now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, a[0], &actions, &attr, a.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(child_fd);
  if (rc != 0) {
    close(read_fd);
    return 0;
  }
  std::vector<char> buf(256 * 1024);
  uint64_t total = 0;
  ssize_t n;
  while ((n = read(read_fd, buf.data(), buf.size())) > 0) total += static_cast<uint64_t>(n);  // EOF, or EIO on a PTY
  close(read_fd);
  int status = 0;
  waitpid(pid, &status, 0);
  *bytes_out = total;
  return static_cast<double>(total) / seconds_since(start);
}

double pipe_throughput(uint64_t bytes, uint64_t* got) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return 0;
  return read_throughput({"/usr/bin/head", "-c", std::to_string(bytes), "/dev/zero"}, p[0], p[1], false, got);
}

double pty_throughput(uint64_t bytes, uint64_t* got) {
  int master = -1, slave = -1;
  if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return 0;
  fcntl(master, F_SETFD, FD_CLOEXEC);
  fcntl(slave, F_SETFD, FD_CLOEXEC);
  return read_throughput({"/usr/bin/head", "-c", std::to_string(bytes), "/dev/zero"}, master, slave, true, got);
}

class Bench {
 public:
  explicit Bench(Options o) : o_(std::move(o)) { stub_ = make_stub(); }

  std::unique_ptr<v1::Exec::Stub> make_stub() const {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 * 1024 * 1024);
    // Each stub its own connection (clients in (e) must not share one HTTP/2 connection).
    args.SetInt("codexd.bench.unique", next_channel_++);
    return v1::Exec::NewStub(grpc::CreateCustomChannel("unix:" + o_.socket, grpc::InsecureChannelCredentials(), args));
  }

  int run() {
    if (o_.phase == "output") return output();
    if (o_.phase == "waiting") return waiting();
    if (o_.phase == "clients") return clients();
    std::fprintf(stderr, "unknown phase %s\n", o_.phase.c_str());
    return 2;
  }

 private:
  // ---- (a) (b) (c) -------------------------------------------------------------------------
  int output() {
    std::vector<double> pipe_rates, attach_rates, pty_rates, pty_attach_rates, burst_ms, burst_bytes;
    for (int run = 0; run < o_.runs; ++run) {
      uint64_t got = 0;
      pipe_rates.push_back(pipe_throughput(o_.pipe_bytes, &got));
      if (got != o_.pipe_bytes) return fail("pipe read " + std::to_string(got) + " bytes");
      double rate = attach_throughput(o_.pipe_bytes, false);
      if (rate <= 0) return 1;
      attach_rates.push_back(rate);
      pty_rates.push_back(pty_throughput(o_.pty_bytes, &got));
      if (got != o_.pty_bytes) return fail("bare PTY read " + std::to_string(got) + " bytes");
      rate = attach_throughput(o_.pty_bytes, true);
      if (rate <= 0) return 1;
      pty_attach_rates.push_back(rate);
      double ms = 0;
      uint64_t bytes = 0;
      if (!poll_burst(&ms, &bytes)) return 1;
      burst_ms.push_back(ms);
      burst_bytes.push_back(static_cast<double>(bytes));
    }
    table_header(o_.label + ": output, medians of " + std::to_string(o_.runs) + " runs (GB = 1e9 bytes)");
    const std::string pipe_ref = "plain pipe read " + std::to_string(o_.pipe_bytes >> 20) + " MiB";
    report({"(a) Attach lossless head -c " + std::to_string(o_.pipe_bytes >> 20) + "M", median(attach_rates) / 1e9, "GB/s",
            pipe_ref, median(pipe_rates) / 1e9, ">= 0.8x"});
    report({"(b) PTY Attach lossless head -c " + std::to_string(o_.pty_bytes >> 20) + "M", median(pty_attach_rates) / 1e9,
            "GB/s", "bare PTY read (openpty)", median(pty_rates) / 1e9, ">= 0.8x"});
    const double fewest = *std::min_element(burst_bytes.begin(), burst_bytes.end());
    report({"(c) one Poll of a 1 MiB burst: bytes (fewest)", fewest, "bytes", "burst size", 1048576.0, "1.00x"});
    report({"(c) one Poll of a 1 MiB burst: time", median(burst_ms), "ms", "", 0, "-"});
    return 0;
  }

  int fail(const std::string& why) {
    std::fprintf(stderr, "scale_bench: %s\n", why.c_str());
    return 1;
  }

  // Starts `sh -c "printf R; read a < FIFO; SCRIPT"`, returns its session id once the "R" came
  // (the command then waits for the FIFO: nothing produced, nothing lost).
  int start_gated(const std::string& fifo, const std::string& script, bool tty) {
    unlink(fifo.c_str());
    if (mkfifo(fifo.c_str(), 0600) != 0) return 0;
    v1::ExecCommandRequest request;
    request.add_argv("/bin/sh");
    request.add_argv("-c");
    request.add_argv("printf R; read a < " + fifo + "; " + script);
    request.set_workdir(o_.workdir);
    request.set_tty(tty);
    request.set_yield_time_ms(250);
    v1::ExecResult result;
    grpc::ClientContext context;
    auto status = stub_->ExecCommand(&context, request, &result);
    if (!status.ok() || !result.has_session_id()) {
      std::fprintf(stderr, "ExecCommand failed: %s %s\n", status.error_message().c_str(), result.text().c_str());
      return 0;
    }
    return result.session_id();
  }

  static void open_gate(const std::string& fifo) {
    int fd = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    (void)!write(fd, "go\n", 3);
    close(fd);
    unlink(fifo.c_str());
  }

  void reap(int session_id) {
    v1::CancelRequest cancel;
    cancel.set_session_id(session_id);
    cancel.set_mode(v1::CancelRequest::KILL);
    v1::CancelResponse cancelled;
    grpc::ClientContext cancel_context;
    stub_->Cancel(&cancel_context, cancel, &cancelled);
    v1::PollRequest poll;
    poll.set_session_id(session_id);
    poll.set_yield_time_ms(2000);
    v1::ExecResult polled;
    grpc::ClientContext poll_context;
    stub_->Poll(&poll_context, poll, &polled);
  }

  // Lossless Attach of `head -c bytes /dev/zero` from offset 0; bytes per second from the
  // opening of the gate to the exit event. Checks that every offset follows the previous one.
  double attach_throughput(uint64_t bytes, bool tty) {
    const std::string fifo = o_.workdir + "/bench-go";
    const int id = start_gated(fifo, "exec head -c " + std::to_string(bytes) + " /dev/zero", tty);
    if (id == 0) return 0;
    grpc::ClientContext context;
    v1::AttachRequest attach;
    attach.set_session_id(id);
    attach.set_from_offset(0);
    attach.set_lossless(true);
    auto reader = stub_->Attach(&context, attach);
    v1::OutputEvent event;
    if (!reader->Read(&event) || !event.has_output()) return 0;
    uint64_t got = event.output().data().size();
    auto start = Clock::now();
    open_gate(fifo);
    bool gap = false, exited = false, out_of_order = false;
    size_t messages = 0;
    while (reader->Read(&event)) {
      if (event.has_output()) {
        if (event.output().offset() != got) out_of_order = true;
        got += event.output().data().size();
        ++messages;
      }
      if (event.has_gap()) gap = true;
      if (event.has_exit()) exited = true;
    }
    const double seconds = seconds_since(start);
    reader->Finish();
    if (tty) reap(id);
    else {
      v1::PollRequest poll;
      poll.set_session_id(id);
      v1::ExecResult polled;
      grpc::ClientContext poll_context;
      stub_->Poll(&poll_context, poll, &polled);
    }
    if (gap || out_of_order || !exited || got != bytes + 1) {
      std::fprintf(stderr, "Attach%s: %llu bytes, gap=%d out_of_order=%d exit=%d\n", tty ? " (tty)" : "",
                   static_cast<unsigned long long>(got), gap, out_of_order, exited);
      return 0;
    }
    if (std::getenv("SCALE_BENCH_VERBOSE")) {
      std::fprintf(stderr, "  attach%s: %zu messages, %.1f KiB average\n", tty ? " (tty)" : "", messages,
                   static_cast<double>(bytes) / 1024.0 / static_cast<double>(std::max<size_t>(messages, 1)));
    }
    return static_cast<double>(bytes) / seconds;
  }

  // (c) A Poll waiting when the command writes 1 MiB at once: what that one Poll returns.
  bool poll_burst(double* ms, uint64_t* bytes) {
    const std::string fifo = o_.workdir + "/bench-burst";
    const int id = start_gated(fifo, "head -c 1048576 /dev/zero; exec sleep 60", false);
    if (id == 0) return false;
    grpc::CompletionQueue cq;
    grpc::ClientContext context;
    v1::PollRequest poll;
    poll.set_session_id(id);
    poll.set_yield_time_ms(10000);
    poll.set_max_output_tokens(262144);  // 1 MiB / 4: the whole burst fits the budget
    v1::ExecResult result;
    grpc::Status status;
    auto call = stub_->PrepareAsyncPoll(&context, poll, &cq);
    call->StartCall();
    call->Finish(&result, &status, reinterpret_cast<void*>(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the Poll is waiting
    auto start = Clock::now();
    open_gate(fifo);
    void* tag = nullptr;
    bool ok = false;
    cq.Next(&tag, &ok);
    *ms = seconds_since(start) * 1000;
    *bytes = result.output().size();
    if (!status.ok()) {
      std::fprintf(stderr, "Poll failed: %s\n", status.error_message().c_str());
      return false;
    }
    if (result.output().find_first_not_of('\0') != std::string::npos) {
      std::fprintf(stderr, "Poll returned bytes that are not the command's\n");
      return false;
    }
    reap(id);
    return true;
  }

  // ---- (d) ---------------------------------------------------------------------------------
  int waiting() {
    std::vector<int> ids;
    for (int i = 0; i < o_.sessions; ++i) {
      v1::ExecCommandRequest request;
      request.add_argv("/bin/sleep");
      request.add_argv("600");
      request.set_workdir(o_.workdir);
      request.set_yield_time_ms(250);
      v1::ExecResult result;
      grpc::ClientContext context;
      auto status = stub_->ExecCommand(&context, request, &result);
      if (!status.ok() || !result.has_session_id()) return fail("ExecCommand sleep: " + status.error_message());
      ids.push_back(result.session_id());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const ProcStatus idle = read_status(o_.daemon_pid);

    // Several connections, like several agents; each call is one HTTP/2 stream.
    std::vector<std::unique_ptr<v1::Exec::Stub>> stubs;
    for (int i = 0; i < 8; ++i) stubs.push_back(make_stub());
    grpc::CompletionQueue cq;
    struct PollCall {
      grpc::ClientContext context;
      v1::ExecResult result;
      grpc::Status status;
      std::unique_ptr<grpc::ClientAsyncResponseReader<v1::ExecResult>> call;
    };
    struct AttachCall {
      grpc::ClientContext context;
      v1::OutputEvent event;
      grpc::Status status;
      std::unique_ptr<grpc::ClientAsyncReader<v1::OutputEvent>> call;
    };
    std::vector<std::unique_ptr<PollCall>> polls;
    std::vector<std::unique_ptr<AttachCall>> attaches;
    std::atomic<int> completed_early{0};
    const auto issued = Clock::now();
    for (int i = 0; i < o_.polls; ++i) {
      auto p = std::make_unique<PollCall>();
      v1::PollRequest request;
      request.set_session_id(ids[static_cast<size_t>(i) % ids.size()]);
      request.set_yield_time_ms(300000);
      p->call = stubs[static_cast<size_t>(i) % stubs.size()]->PrepareAsyncPoll(&p->context, request, &cq);
      p->call->StartCall();
      p->call->Finish(&p->result, &p->status, p.get());
      polls.push_back(std::move(p));
    }
    // Tags: PollCall* (finished), AttachCall* with the low bit set (started or read).
    auto drain_for = [&](std::chrono::milliseconds span, int* events) {
      const auto until = std::chrono::system_clock::now() + span;
      void* tag = nullptr;
      bool ok = false;
      while (cq.AsyncNext(&tag, &ok, until) == grpc::CompletionQueue::GOT_EVENT) ++*events;
    };
    int events = 0;
    drain_for(std::chrono::milliseconds(1500), &events);
    const double polls_issue_s = seconds_since(issued);
    const ProcStatus with_polls = read_status(o_.daemon_pid);
    const int poll_events = events;
    const uint32_t waiting_polls = waiting_calls();

    for (int i = 0; i < o_.attaches; ++i) {
      auto a = std::make_unique<AttachCall>();
      v1::AttachRequest request;
      request.set_session_id(ids[static_cast<size_t>(i) % ids.size()]);
      request.set_lossless(i % 2 == 0);
      a->call = stubs[static_cast<size_t>(i) % stubs.size()]->PrepareAsyncAttach(&a->context, request, &cq);
      a->call->StartCall(reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(a.get()) | 1));
      attaches.push_back(std::move(a));
    }
    events = 0;
    drain_for(std::chrono::milliseconds(1500), &events);  // the starts complete; nothing is read
    for (auto& a : attaches) a->call->Read(&a->event, reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(a.get()) | 1));
    int read_events = 0;
    drain_for(std::chrono::milliseconds(1000), &read_events);  // no output: no read completes
    const ProcStatus with_all = read_status(o_.daemon_pid);
    const uint32_t waiting_all = waiting_calls();

    // End it all: the calls are cancelled, the sessions killed.
    for (auto& p : polls) p->context.TryCancel();
    for (auto& a : attaches) a->context.TryCancel();
    int rest = 0;
    drain_for(std::chrono::milliseconds(3000), &rest);
    for (int id : ids) reap(id);
    completed_early = poll_events + read_events;

    table_header(o_.label + ": " + std::to_string(o_.polls) + " long Polls and " + std::to_string(o_.attaches) +
                 " Attach streams on " + std::to_string(o_.sessions) + " sessions (`sleep 600`)");
    const std::string polls_waiting = std::to_string(o_.polls) + " Polls waiting";
    const std::string all = "+ " + std::to_string(o_.attaches) + " Attach streams";
    report_load("(d)", "idle sessions", idle, "", {});
    report_load("(d)", polls_waiting, with_polls, "idle sessions", idle);
    report_load("(d)", all, with_all, "idle sessions", idle);
    report({"(d) Polls waiting (ListSessions waiting_calls)", static_cast<double>(waiting_polls), "calls", "Polls issued",
            static_cast<double>(o_.polls), "1.00x"});
    report({"(d) waiting calls with the Attach streams", static_cast<double>(waiting_all), "calls", "Polls issued",
            static_cast<double>(o_.polls), "1.00x"});
    report({"(d) calls that ended before the cancel", static_cast<double>(completed_early.load()), "calls", "", 0, "0"});
    report({"(d) time to issue the Polls (incl. 1.5 s wait)", polls_issue_s, "s", "", 0, "-"});
    return 0;
  }

  uint32_t waiting_calls() {
    v1::ListSessionsRequest request;
    v1::ListSessionsResponse response;
    grpc::ClientContext context;
    if (!stub_->ListSessions(&context, request, &response).ok()) return 0;
    uint32_t sum = 0;
    for (const auto& s : response.sessions()) sum += s.waiting_calls();
    return sum;
  }

  // ---- (e) ---------------------------------------------------------------------------------
  // `n` clients on their own connections, each running `per_client` ExecCommand /bin/true.
  // `peak`: the daemon's threads, RSS and descriptors at their highest while they ran (sampled
  // from /proc every 50 ms: /proc has no event for them).
  double run_clients(int n, int per_client, int* errors, ProcStatus* peak) {
    std::vector<std::unique_ptr<v1::Exec::Stub>> stubs;
    for (int i = 0; i < n; ++i) stubs.push_back(make_stub());
    std::atomic<int> failed{0};
    auto one = [&](v1::Exec::Stub* stub) {
      for (int i = 0; i < per_client; ++i) {
        v1::ExecCommandRequest request;
        request.add_argv("/bin/true");
        request.set_workdir(o_.workdir);
        v1::ExecResult result;
        grpc::ClientContext context;
        auto status = stub->ExecCommand(&context, request, &result);
        if (!status.ok() || !result.has_exit_code() || result.exit_code() != 0) {
          if (failed.fetch_add(1) < 3) {
            std::fprintf(stderr, "ExecCommand: %s %s\n", status.error_message().c_str(), result.text().c_str());
          }
        }
      }
    };
    std::atomic<bool> running{true};
    ProcStatus highest = read_status(o_.daemon_pid);
    std::thread sampler([&] {
      while (running) {
        highest = peak_of(highest, read_status(o_.daemon_pid));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    auto start = Clock::now();
    std::vector<std::thread> threads;
    for (auto& s : stubs) threads.emplace_back(one, s.get());
    for (auto& t : threads) t.join();
    const double seconds = seconds_since(start);
    running = false;
    sampler.join();
    *errors = failed.load();
    *peak = highest;
    return n * per_client / seconds;
  }

  int clients() {
    int errors = 0;
    ProcStatus peak;
    run_clients(1, 5, &errors, &peak);  // warm up
    const ProcStatus before = read_status(o_.daemon_pid);
    std::vector<double> single;
    int single_errors = 0;
    for (int run = 0; run < o_.runs; ++run) {
      single.push_back(run_clients(1, o_.commands_per_client, &errors, &peak));
      single_errors += errors;
    }
    table_header(o_.label + ": ExecCommand /bin/true, " + std::to_string(o_.commands_per_client) +
                 " per client, medians of " + std::to_string(o_.runs) + " runs");
    report({"(e) 1 client", median(single), "cmd/s", "", 0, "-"});
    report({"(e) errors with 1 client (all runs)", static_cast<double>(single_errors), "errors", "", 0, "0"});
    report_load("(e)", "before the clients", before, "", {});
    for (int n : o_.clients) {
      std::vector<double> many;
      int many_errors = 0;
      ProcStatus highest;
      for (int run = 0; run < o_.runs; ++run) {
        many.push_back(run_clients(n, o_.commands_per_client, &errors, &peak));
        many_errors += errors;
        highest = peak_of(highest, peak);
      }
      const std::string clients = std::to_string(n) + " concurrent clients";
      report({"(e) " + clients, median(many), "cmd/s", "1 client", median(single), "no errors"});
      report({"(e) errors with " + clients + " (all runs)", static_cast<double>(many_errors), "errors", "", 0, "0"});
      report_load("(e)", "peak with " + clients, highest, "before the clients", before);
    }
    report_load("(e)", "right after the clients", read_status(o_.daemon_pid), "before the clients", before);
    // The daemon closes the clients' connections as it sees them go, and its pools (waiting
    // shims, the cgroup stock) refill on threads of their own: the same figures 2 s later.
    std::this_thread::sleep_for(std::chrono::seconds(2));
    report_load("(e)", "2 s after the clients", read_status(o_.daemon_pid), "before the clients", before);
    return 0;
  }

  Options o_;
  mutable int next_channel_ = 0;
  std::unique_ptr<v1::Exec::Stub> stub_;
};

// "8,32" -> {8, 32}; empty when any count is not positive.
std::vector<int> parse_counts(const std::string& text) {
  std::vector<int> counts;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const int n = std::atoi(text.substr(at, comma - at).c_str());
    if (n <= 0) return {};
    counts.push_back(n);
    at = comma + 1;
  }
  return counts;
}

void usage() {
  std::fprintf(stderr,
               "usage: scale_bench --phase output|waiting|clients --socket PATH --workdir DIR [--daemon-pid PID]\n"
               "                   [--runs N] [--pipe-mib N] [--pty-mib N] [--sessions N] [--polls N] [--attaches N]\n"
               "                   [--clients N[,N...]] [--commands N] [--label TEXT]\n");
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
    else if (arg == "--workdir") o.workdir = value();
    else if (arg == "--phase") o.phase = value();
    else if (arg == "--daemon-pid") o.daemon_pid = std::atoi(value().c_str());
    else if (arg == "--runs") o.runs = std::atoi(value().c_str());
    else if (arg == "--pipe-mib") o.pipe_bytes = std::strtoull(value().c_str(), nullptr, 10) << 20;
    else if (arg == "--pty-mib") o.pty_bytes = std::strtoull(value().c_str(), nullptr, 10) << 20;
    else if (arg == "--sessions") o.sessions = std::atoi(value().c_str());
    else if (arg == "--polls") o.polls = std::atoi(value().c_str());
    else if (arg == "--attaches") o.attaches = std::atoi(value().c_str());
    else if (arg == "--clients") o.clients = parse_counts(value());
    else if (arg == "--commands") o.commands_per_client = std::atoi(value().c_str());
    else if (arg == "--label") o.label = value();
    else {
      usage();
      return 2;
    }
  }
  if (o.socket.empty() || o.workdir.empty() || o.phase.empty() || o.runs <= 0 || o.sessions <= 0 || o.clients.empty() ||
      o.commands_per_client <= 0 || o.pipe_bytes == 0 || o.pty_bytes == 0) {
    usage();
    return 2;
  }
  if (o.label.empty()) o.label = "codexd at " + o.socket;
  return Bench(std::move(o)).run();
}
