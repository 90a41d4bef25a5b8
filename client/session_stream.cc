#include "client/session_stream.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "codexd/v1/exec.grpc.pb.h"

namespace codexd::client {
namespace {

void write_stdout(const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(STDOUT_FILENO, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

}  // namespace

void block_follow_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGWINCH);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

namespace {

// Ctrl-C interrupts a pipe session (a raw TTY sends the byte itself); window changes resize
// the remote terminal. Runs until `done` (woken by a SIGWINCH to ourselves).
void forward_signals(v1::Exec::Stub& stub, const ClientOptions& options, int session_id, bool tty,
                     const std::atomic<bool>& done) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGWINCH);
  int sig = 0;
  while (sigwait(&set, &sig) == 0 && !done.load()) {
    grpc::ClientContext ctx;
    prepare(ctx, options);
    if (sig == SIGINT) {
      v1::CancelRequest cancel;
      cancel.set_session_id(session_id);
      cancel.set_mode(v1::CancelRequest::INTERRUPT);
      v1::CancelResponse response;
      stub.Cancel(&ctx, cancel, &response);
    } else if (sig == SIGWINCH && tty) {
      if (auto size = terminal_size(STDIN_FILENO)) {
        v1::ResizeTerminalRequest resize;
        resize.set_session_id(session_id);
        resize.set_rows(size->rows);
        resize.set_cols(size->cols);
        v1::ResizeTerminalResponse response;
        stub.ResizeTerminal(&ctx, resize, &response);
      }
    }
  }
}

// stdin -> the session's terminal, until EOF, a failed send, or `done`.
void forward_stdin(v1::Exec::Stub& stub, const ClientOptions& options, int session_id, const std::atomic<bool>& done) {
  char buf[4096];
  while (!done.load()) {
    pollfd p{STDIN_FILENO, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n <= 0) return;
    grpc::ClientContext ctx;
    prepare(ctx, options);
    v1::SendInputRequest input;
    input.set_session_id(session_id);
    input.set_data(std::string(buf, static_cast<size_t>(n)));
    v1::SendInputResponse response;
    if (!stub.SendInput(&ctx, input, &response).ok()) return;
  }
}

// Attach: output to stdout, gaps reported on stderr, until the stream ends. Returns the exit
// code if the exit event came, and the stream's final status in `status`.
std::optional<int> stream_output(v1::Exec::Stub& stub, const ClientOptions& options, int session_id,
                                 std::optional<uint64_t> from_offset, bool lossless, grpc::Status& status) {
  grpc::ClientContext context;
  prepare(context, options);
  v1::AttachRequest attach;
  attach.set_session_id(session_id);
  if (from_offset) attach.set_from_offset(*from_offset);
  attach.set_lossless(lossless);
  auto reader = stub.Attach(&context, attach);
  v1::OutputEvent event;
  std::optional<int> exit_code;
  while (reader->Read(&event)) {
    if (event.has_output()) {
      write_stdout(event.output().data());
    } else if (event.has_gap()) {
      std::fprintf(stderr, "\r\ncodexctl: %llu bytes of output were no longer retained\r\n",
                   static_cast<unsigned long long>(event.gap().to_offset() - event.gap().from_offset()));
    } else if (event.has_exit()) {
      exit_code = event.exit().exit_code();
    }
  }
  status = reader->Finish();
  return exit_code;
}

// The exit was already shown; tell the daemon we saw it (it forgets reported sessions).
void acknowledge_exit(v1::Exec::Stub& stub, const ClientOptions& options, int session_id) {
  grpc::ClientContext ctx;
  prepare(ctx, options);
  v1::PollRequest poll_request;
  poll_request.set_session_id(session_id);
  v1::ExecResult ignored;
  stub.Poll(&ctx, poll_request, &ignored);
}

}  // namespace

SignalForwarder::SignalForwarder(v1::Exec::Stub& stub, const ClientOptions& options, int session_id, bool tty)
    : thread_([this, &stub, &options, session_id, tty] { forward_signals(stub, options, session_id, tty, done_); }) {}

SignalForwarder::~SignalForwarder() {
  done_.store(true);
  ::kill(::getpid(), SIGWINCH);  // wake sigwait so the signal thread sees `done_`
  thread_.join();
}

int follow_session(const ClientOptions& options, std::shared_ptr<grpc::Channel> channel, int session_id,
                   std::optional<uint64_t> from_offset, bool tty, bool reap, bool lossless) {
  auto stub = v1::Exec::NewStub(channel);
  std::optional<RawTerminal> raw;
  if (tty && ::isatty(STDIN_FILENO)) raw.emplace();
  std::atomic<bool> done{false};
  std::optional<SignalForwarder> signals(std::in_place, *stub, options, session_id, tty);
  std::thread input_thread;
  if (tty) input_thread = std::thread([&] { forward_stdin(*stub, options, session_id, done); });

  grpc::Status status;
  std::optional<int> exit_code = stream_output(*stub, options, session_id, from_offset, lossless, status);
  done.store(true);
  raw.reset();
  signals.reset();
  if (input_thread.joinable()) input_thread.join();

  if (!exit_code) return status.ok() ? kExitRpcError : report_rpc_error(status, options);
  if (reap) acknowledge_exit(*stub, options, session_id);
  return *exit_code;
}

}  // namespace codexd::client
