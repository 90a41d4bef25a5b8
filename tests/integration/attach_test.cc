// Exec.Attach: replay from an offset, any number of watchers seeing the same bytes, Poll's
// buffer left alone, the exit event at the end, and lossless (the command waits for the
// watcher) versus lossy (the watcher skips ahead with a gap event) watchers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/integration/daemon_fixture.h"
#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

// One Attach stream, read event by event; checks that chunks and gaps tile the stream.
class Watcher {
 public:
  Watcher(v1::Exec::Stub& stub, int session_id, std::optional<uint64_t> from, bool lossless) {
    v1::AttachRequest request;
    request.set_session_id(session_id);
    if (from) request.set_from_offset(*from);
    request.set_lossless(lossless);
    reader_ = stub.Attach(&context_, request);
  }

  // Reads one event; false at the end of the stream.
  bool next() {
    v1::OutputEvent event;
    if (!reader_->Read(&event)) {
      ended_ = true;
      return false;
    }
    if (event.has_output()) {
      if (next_offset_) {
        EXPECT_EQ(event.output().offset(), *next_offset_) << "chunks must be contiguous";
      }
      if (chunks_.empty() && gaps_.empty()) first_offset_ = event.output().offset();
      chunks_.push_back(event.output());
      data_ += event.output().data();
      next_offset_ = event.output().offset() + event.output().data().size();
    } else if (event.has_gap()) {
      if (next_offset_) {
        EXPECT_EQ(event.gap().from_offset(), *next_offset_);
      }
      EXPECT_LT(event.gap().from_offset(), event.gap().to_offset());
      gaps_.push_back(event.gap());
      next_offset_ = event.gap().to_offset();
    } else if (event.has_exit()) {
      EXPECT_FALSE(exit_.has_value()) << "one exit event";
      if (next_offset_) {
        EXPECT_EQ(event.exit().final_offset(), *next_offset_);
      }
      exit_ = event.exit();
    }
    return true;
  }
  // Reads until `n` bytes of data arrived in total (or the stream ended).
  void read_data(size_t n) {
    while (data_.size() < n && next()) {
    }
  }
  grpc::Status read_to_end() {
    while (next()) {
    }
    return reader_->Finish();
  }

  const std::string& data() const { return data_; }
  const std::vector<v1::OutputEvent::Chunk>& chunks() const { return chunks_; }
  const std::vector<v1::OutputEvent::Gap>& gaps() const { return gaps_; }
  const std::optional<v1::OutputEvent::Exit>& exit() const { return exit_; }
  std::optional<uint64_t> first_offset() const { return first_offset_; }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::OutputEvent>> reader_;
  std::string data_;
  std::vector<v1::OutputEvent::Chunk> chunks_;
  std::vector<v1::OutputEvent::Gap> gaps_;
  std::optional<v1::OutputEvent::Exit> exit_;
  std::optional<uint64_t> next_offset_;
  std::optional<uint64_t> first_offset_;
  bool ended_ = false;
};

std::string seq_output(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) out += std::to_string(i) + "\n";
  return out;
}

class AttachTest : public UnsandboxedDaemonTest {};

TEST_F(AttachTest, WatchersReplayFromAnOffsetSeeTheSameBytesAndLeavePollItsOutput) {
  Fifo one(daemon_.workspace(), "one"), two(daemon_.workspace(), "two");
  auto call = exec_command(*stub_, argv_request(daemon_, {"/bin/sh", "-c",
                                                          "printf 0123456789; read a < one; printf abc; read b < two; "
                                                          "printf XYZ; exit 3"},
                                                250));
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  const int id = call.result.session_id();
  auto head = follow_until_output(*stub_, call.result, "0123456789");
  ASSERT_EQ(head.output, "0123456789");
  EXPECT_EQ(head.last.output_offset(), 10u);

  // Poll already took these bytes; watchers still get them from the retention ring.
  Watcher from4(*stub_, id, 4, true), from_start(*stub_, id, std::nullopt, false), from_end(*stub_, id, 10, true);
  from4.read_data(6);
  from_start.read_data(10);
  EXPECT_EQ(from4.data(), "456789");
  EXPECT_EQ(from4.first_offset(), 4u);
  EXPECT_EQ(from_start.data(), "0123456789");
  EXPECT_EQ(from_start.first_offset(), 0u);

  one.write("go\n");
  from4.read_data(9);
  from_start.read_data(13);
  from_end.read_data(3);
  EXPECT_EQ(from4.data(), "456789abc");
  EXPECT_EQ(from_start.data(), "0123456789abc");
  EXPECT_EQ(from_end.data(), "abc");
  EXPECT_EQ(from_end.first_offset(), 10u);

  // The watchers did not consume Poll's buffer.
  auto polled = follow_until_output(*stub_, head.last, "abc");
  ASSERT_TRUE(polled.status.ok()) << describe(polled.status);
  EXPECT_EQ(polled.output, "0123456789abc");
  EXPECT_EQ(polled.last.output_offset(), 13u);

  two.write("go\n");
  for (Watcher* w : {&from4, &from_start, &from_end}) {
    auto st = w->read_to_end();
    EXPECT_TRUE(st.ok()) << describe(st);
    ASSERT_TRUE(w->exit().has_value());
    EXPECT_EQ(w->exit()->exit_code(), 3);
    EXPECT_FALSE(w->exit()->has_signal());
    EXPECT_EQ(w->exit()->final_offset(), 16u);
    EXPECT_TRUE(w->gaps().empty());
  }
  EXPECT_EQ(from4.data(), "456789abcXYZ");
  EXPECT_EQ(from_start.data(), "0123456789abcXYZ");
  EXPECT_EQ(from_end.data(), "abcXYZ");

  auto end = follow_until_exit(*stub_, polled.last);
  EXPECT_EQ(end.output, "abcXYZ");  // from the last result on
  EXPECT_EQ(end.last.exit_code(), 3);
  // Reported: Attach no longer finds it either.
  Watcher late(*stub_, id, std::nullopt, false);
  auto st = late.read_to_end();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "Unknown process id " + std::to_string(id));
}

TEST_F(AttachTest, AWatcherOfAKilledSessionGetsTheSignalInTheExitEvent) {
  auto call = exec_command(*stub_, argv_request(daemon_, {"/bin/sh", "-c", "echo up; exec sleep 1000"}, 250));
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  Watcher w(*stub_, call.result.session_id(), 0, false);
  w.read_data(3);
  ASSERT_EQ(w.data(), "up\n");
  ASSERT_TRUE(cancel(*stub_, call.result.session_id(), v1::CancelRequest::KILL).ok());
  EXPECT_TRUE(w.read_to_end().ok());
  ASSERT_TRUE(w.exit().has_value());
  EXPECT_EQ(w.exit()->exit_code(), 137);
  EXPECT_EQ(w.exit()->signal(), 9);
  EXPECT_EQ(w.exit()->final_offset(), 3u);
}

TEST_F(AttachTest, OnlyTheRetentionWindowIsReplayedAndTheRestIsReportedAsAGap) {
  Fifo done(daemon_.workspace(), "done");
  const std::string expected = seq_output(300'000);  // about 2 MiB, twice the 1 MiB window
  auto call = exec_command(*stub_, argv_request(daemon_, {"/bin/sh", "-c", "seq 1 300000; echo x > done; read a < done"}, 250));
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  // The command has written everything...
  EXPECT_EQ(done.read_all(), "x\n");
  // ...and the daemon has read it all once Poll's offset (it returns at each new output) is there.
  uint64_t end = call.result.output_offset();
  for (int i = 0; i < 100 && end < expected.size(); ++i) {
    end = poll(*stub_, call.result.session_id(), 10'000).result.output_offset();
  }
  ASSERT_EQ(end, expected.size());

  Watcher w(*stub_, call.result.session_id(), 0, false);
  w.read_data(1);
  ASSERT_EQ(w.gaps().size(), 1u);
  EXPECT_EQ(w.gaps()[0].from_offset(), 0u);
  EXPECT_EQ(w.gaps()[0].to_offset(), expected.size() - 1024 * 1024);  // exactly the 1 MiB window is left
  w.read_data(1024 * 1024);
  EXPECT_EQ(w.data().size(), 1024u * 1024);
  EXPECT_TRUE(w.data() == expected.substr(expected.size() - 1024 * 1024)) << "replayed bytes differ";
  done.write("y\n");
  EXPECT_TRUE(w.read_to_end().ok());
  ASSERT_TRUE(w.exit().has_value());
  EXPECT_EQ(w.exit()->exit_code(), 0);
  EXPECT_EQ(w.exit()->final_offset(), expected.size());
}

TEST_F(AttachTest, ALosslessWatcherHoldsTheCommandBackWhileALossyOneSkipsAhead) {
  constexpr int kLines = 2'000'000;  // about 15 MB
  const std::string expected = "R" + seq_output(kLines);
  Fifo go_lossless(daemon_.workspace(), "go1"), go_lossy(daemon_.workspace(), "go2");
  Fifo fin_lossless(daemon_.workspace(), "fin1"), fin_lossy(daemon_.workspace(), "fin2");
  auto start = [&](const std::string& go, const std::string& fin) {
    auto call = exec_command(*stub_, argv_request(daemon_, {"/bin/sh", "-c",
                                                            "printf R; read a < " + go + "; seq 1 " + std::to_string(kLines) +
                                                                "; echo x > " + fin},
                                                  250));
    EXPECT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
    return call.result.session_id();
  };
  const int lossless_id = start("go1", "fin1");
  const int lossy_id = start("go2", "fin2");
  Watcher lossless(*stub_, lossless_id, 0, true);
  Watcher lossy(*stub_, lossy_id, 0, false);
  // Both watchers are registered once they have seen the first byte.
  lossless.read_data(1);
  lossy.read_data(1);
  ASSERT_EQ(lossless.data(), "R");
  ASSERT_EQ(lossy.data(), "R");

  // Neither watcher reads now. The lossy session runs to its end...
  go_lossy.write("x\n");
  go_lossless.write("x\n");
  EXPECT_EQ(fin_lossy.read_all(), "x\n");
  // ...while the lossless one is held near the window (it cannot have produced everything).
  uint64_t lossless_bytes = 0;
  for (const auto& s : list_sessions(*stub_)) {
    if (s.session_id() == lossless_id) lossless_bytes = s.output_bytes();
  }
  EXPECT_LT(lossless_bytes, expected.size() / 2) << "the lossless watcher did not hold the command back";

  auto st = lossy.read_to_end();
  EXPECT_TRUE(st.ok()) << describe(st);
  EXPECT_FALSE(lossy.gaps().empty()) << "a lagging lossy watcher skips ahead";
  size_t checked = 0;
  for (const auto& chunk : lossy.chunks()) {
    ASSERT_LE(chunk.offset() + chunk.data().size(), expected.size());
    ASSERT_TRUE(expected.compare(chunk.offset(), chunk.data().size(), chunk.data()) == 0) << "at " << chunk.offset();
    checked += chunk.data().size();
  }
  EXPECT_LT(checked, expected.size());
  ASSERT_TRUE(lossy.exit().has_value());
  EXPECT_EQ(lossy.exit()->final_offset(), expected.size());

  lossless.read_data(expected.size());
  EXPECT_EQ(fin_lossless.read_all(), "x\n");
  st = lossless.read_to_end();
  EXPECT_TRUE(st.ok()) << describe(st);
  EXPECT_TRUE(lossless.gaps().empty());
  EXPECT_EQ(lossless.data().size(), expected.size());
  EXPECT_TRUE(lossless.data() == expected) << "lossless data differs";
  ASSERT_TRUE(lossless.exit().has_value());
  EXPECT_EQ(lossless.exit()->exit_code(), 0);
  EXPECT_EQ(lossless.exit()->final_offset(), expected.size());
}

// End to end: a lossless watcher that read nothing while the command wrote and ended gets every
// byte, then the exit. (The shim once queued "output closed" and the exit ahead of output still
// in its ring; whether a watcher then saw the exit early depended on timing, so the order itself
// is checked deterministically in ShimLinkTest.OutputClosedAndTheExitComeAfterTheLastByte.)
// 1.7 MB fits in the daemon's window (1 MiB), the socket and the shim's ring (1 MiB), so the
// command ends while nothing has been read.
TEST_F(AttachTest, OutputStillOnItsWayReachesALosslessWatcherBeforeTheExit) {
  constexpr uint64_t kBytes = 1'700'000;
  Fifo go(daemon_.workspace(), "go"), fin(daemon_.workspace(), "fin");
  auto call = exec_command(*stub_, argv_request(daemon_, {"/bin/sh", "-c",
                                                          "printf R; read a < go; head -c " + std::to_string(kBytes) +
                                                              " /dev/zero; echo x > fin"},
                                                250));
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  pid_t leader = 0;
  for (const auto& s : list_sessions(*stub_)) {
    if (s.session_id() == call.result.session_id()) leader = s.pid();
  }
  ASSERT_GT(leader, 0);
  Watcher watcher(*stub_, call.result.session_id(), 0, true);
  watcher.read_data(1);
  go.write("x\n");
  ASSERT_EQ(fin.read_all(), "x\n");  // all of it written, nothing of it read
  // The command has ended (its leader stays a zombie until the daemon reaps it).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (process_state(leader) != 'Z' && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(process_state(leader), 'Z');
  auto st = watcher.read_to_end();
  EXPECT_TRUE(st.ok()) << describe(st);
  EXPECT_TRUE(watcher.gaps().empty());
  EXPECT_EQ(watcher.data().size(), kBytes + 1);
  ASSERT_TRUE(watcher.exit().has_value());
  EXPECT_EQ(watcher.exit()->final_offset(), kBytes + 1);
}

// A terminal session (what the shim reads is a PTY master) and a watcher that reads one event
// at a time with a pause after each: the command is held back, nothing is skipped or repeated.
TEST_F(AttachTest, ALosslessWatcherOfATerminalThatReadsSlowlyGetsEveryByteOnce) {
  constexpr int kLines = 400'000;  // about 2.7 MB with CR LF: more than twice the 1 MiB window
  std::string expected = "R";
  for (int i = 1; i <= kLines; ++i) expected += std::to_string(i) + "\r\n";  // the terminal's ONLCR
  Fifo go(daemon_.workspace(), "go");
  auto request = argv_request(daemon_, {"/bin/sh", "-c", "printf R; read a < go; seq 1 " + std::to_string(kLines)}, 250);
  request.set_tty(true);
  auto call = exec_command(*stub_, request);
  ASSERT_TRUE(call.status.ok() && call.result.has_session_id()) << describe(call.status);
  Watcher w(*stub_, call.result.session_id(), 0, true);
  w.read_data(1);
  ASSERT_EQ(w.data(), "R");
  go.write("x\n");
  while (w.next()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_TRUE(w.gaps().empty());
  EXPECT_EQ(w.data().size(), expected.size());
  EXPECT_TRUE(w.data() == expected) << "lossless data differs";
  ASSERT_TRUE(w.exit().has_value());
  EXPECT_EQ(w.exit()->exit_code(), 0);
  EXPECT_EQ(w.exit()->final_offset(), expected.size());
}

}  // namespace
}  // namespace codexd::testing
