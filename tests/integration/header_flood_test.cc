// Issue 19 item 1: a HEADERS frame without END_HEADERS followed by endless CONTINUATION frames.
// gRPC 1.51's HPACK parser buffers such a header block without limit (10 MB sent took +235 MB
// of the daemon's memory, never given back), although the server advertises an 8 KiB header
// list. The daemon's HTTP/2 guard (daemon/server/http2_guard.h) closes the connection once a
// header block passes its limit; a block split into CONTINUATION frames below it still works.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string>

#include "base/unique_fd.h"
#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"
#include "tests/integration/process_probe.h"

namespace codexd::testing {
namespace {

constexpr char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr uint8_t kHeaders = 0x1, kData = 0x0, kSettings = 0x4, kGoaway = 0x7, kContinuation = 0x9;
constexpr uint8_t kEndStream = 0x1, kEndHeaders = 0x4;

std::string frame(uint8_t type, uint8_t flags, uint32_t stream, const std::string& payload) {
  const size_t n = payload.size();
  std::string f{static_cast<char>(n >> 16), static_cast<char>(n >> 8), static_cast<char>(n), static_cast<char>(type),
                static_cast<char>(flags)};
  for (int shift = 24; shift >= 0; shift -= 8) f.push_back(static_cast<char>((stream >> shift) & 0xff));
  return f + payload;
}

// HPACK integer with an N-bit prefix (RFC 7541 5.1), the prefix bits above it in `first`.
std::string hpack_int(uint8_t first, int prefix_bits, size_t value) {
  const size_t max = (1u << prefix_bits) - 1;
  if (value < max) return std::string(1, static_cast<char>(first | value));
  std::string out(1, static_cast<char>(first | max));
  value -= max;
  while (value >= 128) {
    out.push_back(static_cast<char>(0x80 | (value & 0x7f)));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}
std::string hpack_string(const std::string& s) { return hpack_int(0, 7, s.size()) + s; }
// A literal field without indexing: by static-table name index, or with a new name.
std::string literal(size_t name_index, const std::string& value) { return hpack_int(0, 4, name_index) + hpack_string(value); }
std::string literal(const std::string& name, const std::string& value) {
  return std::string(1, '\0') + hpack_string(name) + hpack_string(value);
}

// Sends all of `bytes`; false when the daemon closed the connection (EPIPE, ECONNRESET) or
// stopped reading for the guard's whole time.
bool send_all(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 30'000) <= 0) return false;
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// Reads frames until one of `type` on `stream` arrives (true), or the connection ends or
// sends GOAWAY first (false).
bool await_frame(int fd, uint8_t type, uint32_t stream) {
  std::string in;
  for (;;) {
    while (in.size() >= 9) {
      const size_t length = (static_cast<uint8_t>(in[0]) << 16) | (static_cast<uint8_t>(in[1]) << 8) | static_cast<uint8_t>(in[2]);
      if (in.size() < 9 + length) break;
      const uint8_t got = static_cast<uint8_t>(in[3]);
      const uint32_t on = ((static_cast<uint8_t>(in[5]) & 0x7f) << 24) | (static_cast<uint8_t>(in[6]) << 16) |
                          (static_cast<uint8_t>(in[7]) << 8) | static_cast<uint8_t>(in[8]);
      if (got == type && on == stream) return true;
      if (got == kGoaway) return false;
      in.erase(0, 9 + length);
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 30'000) <= 0) return false;
    char buf[16384];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    in.append(buf, static_cast<size_t>(n));
  }
}

// True when the daemon has ended the connection: end of stream or a reset, after whatever it
// sent before (a GOAWAY, SETTINGS).
bool ended_by_daemon(int fd) {
  char buf[16384];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 30'000) <= 0) return false;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return true;
  }
}

TEST(HeaderFlood, AnEndlessHeaderBlockClosesTheConnectionAndCostsNoMemory) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  expect_serving(daemon);
  const uint64_t rss_before = resident_bytes(daemon.pid());
  UniqueFd fd(connect_unix(daemon.socket_path()));
  ASSERT_TRUE(fd);
  ASSERT_TRUE(send_all(fd.get(), std::string(kPreface) + frame(kSettings, 0, 0, "")));
  // Small literal fields ("a: b"), 16 KiB per frame (the default maximum frame size), 10 MB.
  std::string fields;
  while (fields.size() + 5 <= 16384) fields += literal("a", "b");
  bool accepted_all = send_all(fd.get(), frame(kHeaders, 0, 1, fields));
  size_t sent = fields.size();
  for (; accepted_all && sent < 10'000'000; sent += fields.size()) {
    accepted_all = send_all(fd.get(), frame(kContinuation, 0, 1, fields));
  }
  EXPECT_FALSE(accepted_all) << "the daemon took a " << sent << "-byte header block";
  EXPECT_TRUE(ended_by_daemon(fd.get()));
  const uint64_t rss_after = resident_bytes(daemon.pid());
  EXPECT_LT(rss_after, rss_before + 10 * 1024 * 1024)
      << "RSS " << rss_before / 1024 << " KiB before, " << rss_after / 1024 << " KiB after " << sent << " bytes";
  std::printf("flood: the daemon took %zu bytes of the header block before closing; RSS %+lld KiB\n", sent,
              (static_cast<long long>(rss_after) - static_cast<long long>(rss_before)) / 1024);
  EXPECT_NE(daemon.daemon_log().find("header block"), std::string::npos) << daemon.daemon_log();
  expect_serving(daemon);
}

// The guard does not break what HTTP/2 allows: a request whose 6 KiB header block comes in a
// HEADERS frame and two CONTINUATION frames is answered (the standard health service).
TEST(HeaderFlood, AHeaderBlockSplitIntoContinuationFramesWithinTheLimitIsServed) {
  TestDaemon daemon(unsandboxed());
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  UniqueFd fd(connect_unix(daemon.socket_path()));
  ASSERT_TRUE(fd);
  const std::string block = std::string("\x83\x86") + literal(4, "/grpc.health.v1.Health/Check") +
                            literal(1, "localhost") + literal(31, "application/grpc") + literal("te", "trailers") +
                            literal("x-padding", std::string(6000, 'p'));
  const size_t third = block.size() / 3;
  const std::string request = std::string(kPreface) + frame(kSettings, 0, 0, "") +
                              frame(kHeaders, 0, 1, block.substr(0, third)) +
                              frame(kContinuation, 0, 1, block.substr(third, third)) +
                              frame(kContinuation, kEndHeaders, 1, block.substr(2 * third)) +
                              frame(kData, kEndStream, 1, std::string(5, '\0'));  // an empty message
  ASSERT_TRUE(send_all(fd.get(), request));
  EXPECT_TRUE(await_frame(fd.get(), kHeaders, 1)) << daemon.daemon_log();
}

}  // namespace
}  // namespace codexd::testing
