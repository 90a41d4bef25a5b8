// codexctl trace ID: what a supervised session ran (Exec.GetTrace), one line per exec in the
// order they happened, each indented under the exec that started its parent process: like
// `strace -f -e execve`, but with the rules' verdicts and nothing else.
#include <cstdio>
#include <map>
#include <string>

#include "base/shell_quote.h"
#include "client/commands.h"
#include "codexd/v1/exec.grpc.pb.h"

namespace codexd::client {
namespace {

constexpr size_t kCommandWidth = 72;

std::string cut(std::string text, size_t width) {
  if (text.size() <= width) return text;
  text.resize(width - 3);
  return text + "...";
}

std::string verdict(const v1::TracedExec& e) {
  if (e.command()) return "command";
  std::string text = e.outcome();
  if (!e.rule().empty() && e.outcome() != "ran") text += ": " + e.rule();
  return text;
}

void print_trace(const v1::GetTraceResponse& trace) {
  std::printf("session %d, agent %s, uid %u, exec supervision %s, %d exec(s)%s%s\n", trace.session_id(),
              trace.agent_id().empty() ? "-" : trace.agent_id().c_str(), trace.owner_uid(), trace.mode().c_str(),
              trace.execs_size(), trace.ended() ? ", ended" : ", running",
              trace.dropped() > 0 ? (", " + std::to_string(trace.dropped()) + " older dropped").c_str() : "");
  if (trace.execs_size() == 0) return;
  std::printf("%9s %8s  %-*s %s\n", "TIME", "PID", static_cast<int>(kCommandWidth), "COMMAND", "VERDICT");
  const int64_t start = trace.execs(0).at_unix_ms();
  std::map<int, int> depth_of_pid;  // the depth of each process's latest exec
  for (const v1::TracedExec& e : trace.execs()) {
    auto parent = depth_of_pid.find(e.traced_parent_pid() != 0 ? e.traced_parent_pid() : e.parent_pid());
    auto same = depth_of_pid.find(e.pid());
    // A process's first exec sits under its parent's; a later one (an `exec` in a shell)
    // replaces the image at the same depth.
    const int depth = same != depth_of_pid.end() ? same->second : parent != depth_of_pid.end() ? parent->second + 1 : 0;
    depth_of_pid[e.pid()] = depth;
    std::vector<std::string> argv(e.argv().begin(), e.argv().end());
    std::string shown = argv.empty() ? e.path() : shell_join(argv);
    if (!argv.empty() && e.path().substr(e.path().rfind('/') + 1) != argv[0].substr(argv[0].rfind('/') + 1)) {
      shown = e.path() + " as " + shown;  // argv[0] names another program
    }
    const std::string indent(static_cast<size_t>(depth) * 2, ' ');
    std::printf("%+8.3fs %8d  %-*s %s\n", static_cast<double>(e.at_unix_ms() - start) / 1000.0, e.pid(),
                static_cast<int>(kCommandWidth), cut(indent + shown, kCommandWidth).c_str(), verdict(e).c_str());
  }
}

}  // namespace

int run_trace(const ClientOptions& options, int session_id) {
  v1::GetTraceRequest request;
  request.set_session_id(session_id);
  v1::GetTraceResponse response;
  auto status = call_unary<v1::Exec>(options, &v1::Exec::Stub::GetTrace, request, &response);
  if (!status.ok()) return report_rpc_error(status, options);
  if (options.json) {
    print_json(response);
  } else {
    print_trace(response);
  }
  return 0;
}

}  // namespace codexd::client
