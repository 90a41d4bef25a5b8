// The acceptor's preface gate (daemon/server/preface_gate.h) against a real daemon: silent,
// half-open and non-HTTP/2 connections are closed before gRPC sees them, and a flood of them
// neither grows the daemon's descriptors past the gate's room nor shuts out a real client.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/create_channel_posix.h>

#include "base/unique_fd.h"
#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

TestDaemonOptions gate_options(int preface_timeout_ms, int per_uid) {
  auto o = unsandboxed();
  o.daemon_config = "preface_timeout_ms = " + std::to_string(preface_timeout_ms) +
                    "\nwaiting_connections_per_uid = " + std::to_string(per_uid) + "\n";
  return o;
}

std::string kinds_text(const std::map<std::string, size_t>& kinds) {
  std::string text;
  for (const auto& [kind, count] : kinds) text += (text.empty() ? "" : " ") + kind + "=" + std::to_string(count);
  return text;
}

TEST(ConnectionGate, ASilentConnectionIsClosedAfterThePrefaceTimeout) {
  TestDaemon daemon(gate_options(300, 64));
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  UniqueFd silent(connect_unix(daemon.socket_path()));
  UniqueFd half(connect_unix(daemon.socket_path()));
  ASSERT_TRUE(silent && half);
  ASSERT_EQ(::write(half.get(), "PRI * HTTP/2.0\r\n", 16), 16);  // a preface that never ends
  const auto start = Clock::now();
  EXPECT_TRUE(closed_by_daemon(silent.get(), milliseconds(20'000)));
  EXPECT_TRUE(closed_by_daemon(half.get(), milliseconds(20'000)));
  EXPECT_GE(Clock::now() - start, milliseconds(250)) << "closed before the timeout";
  expect_serving(daemon);
}

// With an hour-long timeout, only the bytes can be why the connection ends.
TEST(ConnectionGate, BytesThatCannotBeginHttp2AreRefusedAtOnce) {
  TestDaemon daemon(gate_options(60'000, 64));
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  for (const std::string& junk : {std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), std::string("PRI * HTTP/1.1\r\n"), std::string(1, '\0')}) {
    UniqueFd fd(connect_unix(daemon.socket_path()));
    ASSERT_TRUE(fd);
    ASSERT_EQ(::write(fd.get(), junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
    EXPECT_TRUE(closed_by_daemon(fd.get(), milliseconds(20'000))) << "kept: " << junk;
  }
  expect_serving(daemon);
}

// The daemon's descriptors that a connection could leave behind: all but its pools' own. The
// shim pool (a pidfd and a socketpair per waiting shim) and the cgroup pool (a stock of groups
// with their cgroup.procs open, per agent) refill on worker threads at their own pace after a
// command, so their counts at any one moment say nothing about connections; their own tests
// check that they do not leak. Connections themselves are counted by connection_fd_count.
std::map<std::string, size_t> connection_relevant_fds(pid_t daemon) {
  auto kinds = open_fd_kinds(daemon);
  kinds.erase("anon_inode:[pidfd]");
  kinds.erase("socket");
  kinds.erase("cgroup file");
  return kinds;
}

size_t total(const std::map<std::string, size_t>& kinds) {
  size_t sum = 0;
  for (const auto& [kind, count] : kinds) sum += count;
  return sum;
}

// 1,000 connections of one uid that send nothing: the daemon holds at most the uid's room of
// them (plus what it had), a real client of the same uid still gets through, and the
// descriptors come back when the flood ends.
TEST(ConnectionGate, AFloodOfSilentConnectionsIsBoundedAndDoesNotShutOutARealClient) {
  constexpr int kRoom = 16;
  TestDaemon daemon(gate_options(60'000, kRoom));
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  expect_serving(daemon);
  const auto kinds_before = connection_relevant_fds(daemon.pid());
  const size_t connections_before = connection_fd_count(daemon.pid(), daemon.socket_path());
  std::vector<UniqueFd> flood;
  for (int i = 0; i < 1000; ++i) {
    flood.emplace_back(connect_unix(daemon.socket_path()));
    ASSERT_TRUE(flood.back()) << "connection " << i;
  }
  // Every connection but the newest kRoom is closed by the daemon (an event per connection).
  for (size_t i = 0; i + kRoom < flood.size(); ++i) {
    ASSERT_TRUE(closed_by_daemon(flood[i].get(), milliseconds(20'000))) << "connection " << i << " kept";
  }
  EXPECT_LE(connection_fd_count(daemon.pid(), daemon.socket_path()), connections_before + kRoom);
  expect_serving(daemon);
  EXPECT_NE(daemon.daemon_log().find("waiting_connections_per_uid"), std::string::npos) << daemon.daemon_log();
  flood.clear();
  // Polled: another process's close has no event to wait on.
  size_t connections = 0;
  for (int i = 0; i < 500 && (connections = connection_fd_count(daemon.pid(), daemon.socket_path())) > connections_before; ++i) {
    ::usleep(20'000);
  }
  EXPECT_LE(connections, connections_before) << "connections to the daemon's socket";
  auto kinds_after = connection_relevant_fds(daemon.pid());
  for (int i = 0; i < 500 && total(kinds_after) > total(kinds_before); ++i) {
    ::usleep(20'000);
    kinds_after = connection_relevant_fds(daemon.pid());
  }
  EXPECT_LE(total(kinds_after), total(kinds_before))
      << "daemon descriptors besides connections and pools: " << kinds_text(kinds_before) << " before, "
      << kinds_text(kinds_after) << " after";
}

grpc::StatusCode list_sessions_code(const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = v1::Exec::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  v1::ListSessionsRequest request;
  v1::ListSessionsResponse response;
  return stub->ListSessions(&context, request, &response).error_code();
}

// Issue 19 item 4: established connections are capped per uid that is not an admin. The uid
// past its limit gets its new connection closed; root (an admin) is never counted, so a
// user's flood cannot lock it out; a closed connection gives its slot back.
TEST(ConnectionGate, AUidPastItsConnectionLimitIsClosedAndAnAdminIsNot) {
  constexpr uid_t kNobody = 65534;
  auto options = unsandboxed();
  options.socket_mode = "0666";
  options.socket_dir_mode = "0755";
  options.daemon_config = "max_connections_per_uid = 3\n";
  TestDaemon daemon(options);
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  std::vector<std::unique_ptr<ChannelAsUid>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<ChannelAsUid>(daemon.socket_path(), kNobody));
    ASSERT_TRUE(held.back()->ok());
    EXPECT_EQ(list_sessions_code(held.back()->channel()), grpc::StatusCode::OK) << "connection " << i;
  }
  {
    ChannelAsUid fourth(daemon.socket_path(), kNobody);
    ASSERT_TRUE(fourth.ok());
    EXPECT_EQ(list_sessions_code(fourth.channel()), grpc::StatusCode::UNAVAILABLE);
  }
  EXPECT_NE(daemon.daemon_log().find("daemon.max_connections_per_uid"), std::string::npos) << daemon.daemon_log();
  std::vector<std::shared_ptr<grpc::Channel>> admin;
  for (int i = 0; i < 5; ++i) {
    admin.push_back(grpc::CreateInsecureChannelFromFd("root", connect_unix(daemon.socket_path())));
    EXPECT_EQ(list_sessions_code(admin.back()), grpc::StatusCode::OK) << "root's connection " << i;
  }
  // The daemon sees the close of another process's connection in its own time (no event here
  // to wait on): a new connection is tried until one gets in, bounded.
  held.erase(held.begin());
  bool got_in = false;
  for (int i = 0; i < 200 && !got_in; ++i) {
    ChannelAsUid again(daemon.socket_path(), kNobody);
    got_in = again.ok() && list_sessions_code(again.channel()) == grpc::StatusCode::OK;
    if (!got_in) ::usleep(20'000);
  }
  EXPECT_TRUE(got_in) << "the freed slot was not given back";
  admin.clear();
  held.clear();
}

}  // namespace
}  // namespace codexd::testing
