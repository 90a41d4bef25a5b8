// Poll.from_offset against a real daemon: a client whose Poll answer is lost (the daemon drained
// and sent the bytes, the connection broke before the client read them) asks again from the
// last offset it saw and ends up with every byte the command wrote, none twice; an offset older
// than the retained window reports the lost bytes; one past the end is OUT_OF_RANGE.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "tests/integration/daemon_fixture.h"
#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;

// A byte proxy between a gRPC client and the daemon's socket that can swallow what the daemon
// sends: in swallow mode it keeps reading the daemon's HTTP/2 frames (so the daemon's write
// completes) but forwards nothing, and reports when a response stream has ended (a DATA or
// HEADERS frame with END_STREAM: the trailers of a unary answer). cut() then breaks the
// client's connection. That is a lost answer exactly as a dropped connection produces one.
class SwallowingProxy {
 public:
  SwallowingProxy(const std::string& upstream, const std::string& path) : upstream_(upstream), path_(path) {
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ok_ = listen_fd_ >= 0 && ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
          ::listen(listen_fd_, 8) == 0;
    if (ok_) acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~SwallowingProxy() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    ::shutdown(listen_fd_, SHUT_RDWR);
    cut();
    if (acceptor_.joinable()) acceptor_.join();
    for (auto& t : pumps_) t.join();
    for (int fd : open_fds_) ::close(fd);
    ::close(listen_fd_);
    ::unlink(path_.c_str());
  }
  bool ok() const { return ok_; }
  std::shared_ptr<grpc::Channel> channel() const {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 * 1024 * 1024);
    return grpc::CreateCustomChannel("unix:" + path_, grpc::InsecureChannelCredentials(), args);
  }
  void swallow() {
    std::lock_guard lock(mu_);
    swallowing_ = true;
  }
  // Waits until a whole answer was swallowed; returns the DATA payload bytes it had.
  std::optional<uint64_t> wait_swallowed_answer(std::chrono::seconds timeout) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return answer_swallowed_; })) return std::nullopt;
    return swallowed_data_;
  }
  // Breaks every connection through the proxy (the client sees UNAVAILABLE).
  void cut() {
    std::lock_guard lock(mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }

 private:
  void accept_loop() {
    for (;;) {
      int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) return;
      int server = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::strncpy(addr.sun_path, upstream_.c_str(), sizeof addr.sun_path - 1);
      if (::connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(client);
        ::close(server);
        continue;
      }
      {
        std::lock_guard lock(mu_);
        if (stopping_) {
          ::close(client);
          ::close(server);
          return;
        }
        open_fds_.push_back(client);
        open_fds_.push_back(server);
      }
      pumps_.emplace_back([this, client, server] { pump(client, server); });
    }
  }

  void pump(int client, int server) {
    std::string header;  // HTTP/2 frame header being read (9 bytes)
    uint64_t payload_left = 0;
    uint8_t type = 0;
    char buf[65536];
    for (;;) {
      pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) break;
      if (fds[0].revents) {
        ssize_t n = ::read(client, buf, sizeof buf);
        if (n <= 0 || !write_all(server, buf, static_cast<size_t>(n))) break;
      }
      if (fds[1].revents) {
        ssize_t n = ::read(server, buf, sizeof buf);
        if (n <= 0) break;
        std::unique_lock lock(mu_);
        const bool swallowing = swallowing_;
        // Follow the frames (also before swallowing, to stay aligned on frame boundaries).
        for (ssize_t i = 0; i < n;) {
          if (payload_left > 0) {
            uint64_t take = std::min<uint64_t>(payload_left, static_cast<uint64_t>(n - i));
            if (swallowing && type == 0) swallowed_data_ += take;
            payload_left -= take;
            i += static_cast<ssize_t>(take);
            continue;
          }
          header.push_back(buf[i++]);
          if (header.size() < 9) continue;
          auto byte = [&](size_t k) { return static_cast<uint8_t>(header[k]); };
          payload_left = (uint64_t{byte(0)} << 16) | (uint64_t{byte(1)} << 8) | byte(2);
          type = byte(3);
          const bool end_stream = (byte(4) & 0x1) != 0;
          const uint32_t stream = ((uint32_t{byte(5)} & 0x7f) << 24) | (uint32_t{byte(6)} << 16) |
                                  (uint32_t{byte(7)} << 8) | byte(8);
          header.clear();
          if (swallowing && stream != 0 && end_stream && (type == 0 || type == 1)) answer_swallowed_ = true;
        }
        lock.unlock();
        cv_.notify_all();
        if (!swallowing && !write_all(client, buf, static_cast<size_t>(n))) break;
      }
    }
    ::shutdown(client, SHUT_RDWR);
    ::shutdown(server, SHUT_RDWR);
  }

  static bool write_all(int fd, const char* data, size_t n) {
    while (n > 0) {
      ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
      if (w <= 0) return false;
      data += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }

  std::string upstream_, path_;
  int listen_fd_ = -1;
  bool ok_ = false;
  bool stopping_ = false;  // under mu_
  std::thread acceptor_;
  std::vector<std::thread> pumps_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> open_fds_;  // closed when the pumps end (the proxy's lifetime)
  bool swallowing_ = false;
  bool answer_swallowed_ = false;
  uint64_t swallowed_data_ = 0;
};

ExecCall poll_from(v1::Exec::Stub& stub, int session_id, uint64_t from, uint32_t yield_ms, uint32_t tokens) {
  ExecCall call;
  grpc::ClientContext context;
  v1::PollRequest request;
  request.set_session_id(session_id);
  request.set_yield_time_ms(yield_ms);
  request.set_max_output_tokens(tokens);
  request.set_from_offset(from);
  call.status = stub.Poll(&context, request, &call.result);
  return call;
}

std::string seq_output(int from, int to) {
  std::string out;
  for (int i = from; i <= to; ++i) out += std::to_string(i) + "\n";
  return out;
}

class PollRereadTest : public UnsandboxedDaemonTest {};

TEST_F(PollRereadTest, ALostAnswerIsAskedAgainFromTheLastOffsetAndNoByteIsMissingOrTwice) {
  SwallowingProxy proxy(daemon_.socket_path(), daemon_.dir() + "/proxy.sock");
  ASSERT_TRUE(proxy.ok());
  auto via_proxy = v1::Exec::NewStub(proxy.channel());

  // 100000 numbered lines (588895 bytes, within the 1 MiB Attach window and poll buffer) in 40
  // bursts over 2 s or more, so that the command is still writing while the client polls.
  const std::string expected = seq_output(1, 100000);
  auto request = shell_request(daemon_,
                               "for b in $(seq 0 39); do seq $((b*2500+1)) $((b*2500+2500)); sleep 0.05; done",
                               250);
  request.set_max_output_tokens(1'000'000);  // no middle truncation of the first answer
  auto started = exec_command(*stub_, request);
  ASSERT_TRUE(started.status.ok()) << describe(started.status);
  ASSERT_TRUE(started.result.has_session_id()) << started.result.text();
  const int id = started.result.session_id();

  // What the client has: stream bytes [0, offset).
  std::string received = started.result.output();
  uint64_t offset = started.result.output_offset();
  ASSERT_EQ(received.size(), offset);

  // A few rounds before the loss: re-reads from the client's offset (10000 bytes at most) and
  // plain polls, which must start exactly where the re-read left delivery (no byte twice).
  for (int round = 0; round < 3; ++round) {
    auto r = poll_from(*via_proxy, id, offset, 5000, 2500);
    ASSERT_TRUE(r.status.ok()) << describe(r.status);
    EXPECT_EQ(r.result.lost_bytes(), 0u);
    ASSERT_EQ(r.result.output_offset(), offset + r.result.output().size());
    received += r.result.output();
    offset = r.result.output_offset();
    ASSERT_FALSE(r.result.has_exit_code()) << "the command ended too early for this test";
    auto p = poll(*via_proxy, id, 5000, 1'000'000);
    ASSERT_TRUE(p.status.ok()) << describe(p.status);
    ASSERT_EQ(p.result.output_offset() - p.result.output().size(), offset) << "a plain poll repeated or skipped bytes";
    received += p.result.output();
    offset = p.result.output_offset();
    ASSERT_FALSE(p.result.has_exit_code()) << "the command ended too early for this test";
  }

  // The lost answer: a plain Poll, which drains the poll buffer; the daemon sends the answer,
  // the proxy swallows it whole, then the connection breaks. The client never sees those bytes
  // and the daemon will not give them to a plain Poll again.
  proxy.swallow();
  ExecCall lost;
  std::thread lost_call([&] { lost = poll(*via_proxy, id, 5000, 1'000'000); });
  auto swallowed = proxy.wait_swallowed_answer(std::chrono::seconds(60));
  proxy.cut();
  lost_call.join();
  ASSERT_TRUE(swallowed.has_value()) << "the daemon never answered the poll";
  EXPECT_GT(*swallowed, 0u) << "the lost answer carried a message";
  EXPECT_FALSE(lost.status.ok()) << "the client must not have got the answer";

  // Ask again from the last offset the client saw, over a new connection, until the exit.
  bool exited = false;
  for (int i = 0; i < 1000 && !exited; ++i) {
    auto r = poll_from(*stub_, id, offset, 5000, 2500);
    ASSERT_TRUE(r.status.ok()) << describe(r.status);
    EXPECT_EQ(r.result.lost_bytes(), 0u);
    ASSERT_EQ(r.result.output_offset(), offset + r.result.output().size());
    received += r.result.output();
    offset = r.result.output_offset();
    exited = r.result.has_exit_code();
    if (exited) {
      EXPECT_EQ(r.result.exit_code(), 0);
    }
  }
  ASSERT_TRUE(exited);
  EXPECT_EQ(received.size(), expected.size());
  EXPECT_TRUE(received == expected) << "the bytes the client received differ from what the command wrote";

  // The final answer can be asked for again (as if it had been lost too)...
  auto final_again = poll_from(*stub_, id, offset, 0, 2500);
  ASSERT_TRUE(final_again.status.ok()) << describe(final_again.status);
  EXPECT_EQ(final_again.result.output(), "");
  EXPECT_EQ(final_again.result.output_offset(), expected.size());
  EXPECT_TRUE(final_again.result.has_exit_code());
  // ...while a plain Poll knows the session no longer, as before.
  auto plain = poll(*stub_, id, 0);
  EXPECT_EQ(plain.status.error_code(), grpc::StatusCode::NOT_FOUND) << describe(plain.status);
}

class PollRereadSmallWindowTest : public ::testing::Test {
 protected:
  static TestDaemonOptions options() {
    TestDaemonOptions o = unsandboxed();
    o.extra_config = "[exec]\nattach_window_bytes = 65536\n";
    return o;
  }
  void SetUp() override {
    ASSERT_TRUE(daemon_.started()) << daemon_.daemon_log();
    stub_ = v1::Exec::NewStub(daemon_.channel());
  }
  void TearDown() override {
    stub_.reset();
    EXPECT_EQ(daemon_.stop(), 0) << daemon_.daemon_log();
  }
  TestDaemon daemon_{options()};
  std::unique_ptr<v1::Exec::Stub> stub_;
};

// A Poll that is waiting when the command writes 1 MiB at once: the burst reaches the daemon in
// pipe-sized pieces, and the Poll waits for the output to pause (5 ms, at most 100 ms) before it
// answers, so on an idle machine the whole burst comes in one answer (bench/scale measures that).
// Whether `cat` is descheduled for more than 5 ms mid-burst is up to the scheduler, so this test
// checks what must hold on any machine: the answers, however many, carry the burst exactly once,
// in order, untruncated (max_output_tokens = 262144 x 4 bytes = 1 MiB), and the exit follows.
TEST_F(PollRereadTest, APollWaitingForAOneMebibyteBurstGetsAllOfItExactlyOnce) {
  std::string burst;
  for (int i = 1; burst.size() < 1024 * 1024; ++i) burst += std::to_string(i) + "\n";
  burst.resize(1024 * 1024);
  {
    std::ofstream out(daemon_.workspace() + "/burst");
    out << burst;
  }
  Fifo go(daemon_.workspace(), "go"), end(daemon_.workspace(), "end");
  auto call = exec_command(*stub_, argv_request(daemon_, {"/bin/sh", "-c", "printf R; read a < go; cat burst; read b < end"}, 250));
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  const int id = call.result.session_id();
  ASSERT_EQ(call.result.output(), "R");
  ExecCall polled;
  std::thread poller([&] { polled = poll(*stub_, id, 10'000, 262'144); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // usually waiting by now; either way it must hold
  go.write("x\n");
  poller.join();
  ASSERT_TRUE(polled.status.ok()) << describe(polled.status);
  ASSERT_TRUE(polled.result.has_session_id());
  std::string received = polled.result.output();
  int answers = 1;
  for (; received.size() < burst.size() && answers < 1000; ++answers) {
    auto more = poll(*stub_, id, 10'000, 262'144);
    ASSERT_TRUE(more.status.ok()) << describe(more.status);
    ASSERT_FALSE(more.result.has_exit_code()) << "the command exited before the test let it";
    received += more.result.output();
  }
  std::printf("the 1 MiB burst came in %d answer(s)\n", answers);
  RecordProperty("answers", answers);
  EXPECT_EQ(received.size(), burst.size());
  EXPECT_TRUE(received == burst) << "the answers together are not the burst";
  end.write("x\n");
  std::string after;
  ExecCall last;
  for (int i = 0; i < 100; ++i) {
    last = poll(*stub_, id, 10'000);
    if (!last.status.ok()) break;
    after += last.result.output();
    if (last.result.has_exit_code()) break;
  }
  ASSERT_TRUE(last.status.ok()) << describe(last.status);
  EXPECT_EQ(after, "");  // nothing of the burst is returned twice
  EXPECT_EQ(last.result.output_offset(), 1u + burst.size());
  EXPECT_EQ(last.result.exit_code(), 0);
}

TEST_F(PollRereadSmallWindowTest, OlderThanTheWindowReportsLostBytesAndPastTheEndIsOutOfRange) {
  const std::string expected = seq_output(1, 50000);  // 288894 bytes, more than the 65536 retained
  auto started = exec_command(*stub_, shell_request(daemon_, "seq 1 50000; exec sleep 60", 250));
  ASSERT_TRUE(started.status.ok()) << describe(started.status);
  ASSERT_TRUE(started.result.has_session_id()) << started.result.text();
  const int id = started.result.session_id();
  uint64_t end = started.result.output_offset();
  for (int i = 0; i < 100 && end < expected.size(); ++i) {  // each returns at new output
    auto p = poll(*stub_, id, 5000);
    ASSERT_TRUE(p.status.ok()) << describe(p.status);
    end = p.result.output_offset();
  }
  ASSERT_EQ(end, expected.size());

  auto old = poll_from(*stub_, id, 0, 0, 1000);  // 4000 bytes at most
  ASSERT_TRUE(old.status.ok()) << describe(old.status);
  const uint64_t oldest = expected.size() - 65536;
  EXPECT_EQ(old.result.lost_bytes(), oldest);
  EXPECT_EQ(old.result.output(), expected.substr(oldest, 4000));
  EXPECT_EQ(old.result.output_offset(), oldest + 4000);
  EXPECT_THAT(old.result.warnings(), ::testing::Contains(HasSubstr(std::to_string(oldest) + " bytes of output")));

  auto past = poll_from(*stub_, id, end + 1, 0, 1000);
  EXPECT_EQ(past.status.error_code(), grpc::StatusCode::OUT_OF_RANGE) << describe(past.status);
  EXPECT_THAT(past.status.error_message(), HasSubstr("at offset " + std::to_string(end)));

  auto at_end = poll_from(*stub_, id, end, 0, 1000);  // nothing there yet: waits 0 ms
  ASSERT_TRUE(at_end.status.ok()) << describe(at_end.status);
  EXPECT_EQ(at_end.result.output(), "");
  EXPECT_EQ(at_end.result.output_offset(), end);
  EXPECT_EQ(at_end.result.lost_bytes(), 0u);

  auto no_budget = poll_from(*stub_, id, end, 0, 0);
  EXPECT_EQ(no_budget.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << describe(no_budget.status);

  EXPECT_TRUE(cancel(*stub_, id, v1::CancelRequest::KILL).ok());
}

}  // namespace
}  // namespace codexd::testing
