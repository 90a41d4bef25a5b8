// proxy_bench: what codexd's egress proxy (daemon/network) costs, against the same thing
// direct on loopback in the same run:
//   download   --mib MiB from a loopback HTTP origin: direct, through a CONNECT tunnel, and
//              as a plain-HTTP forwarded GET; medians of --runs, measured round-robin; also
//              the tunnel with the read/write relay instead of splice, for comparison
//   connect    median of --connects: TCP connect to the origin vs connect to the proxy +
//              CONNECT + the 200 reply (the proxy's decision, resolve and upstream connect)
// Prints numbers and ratios; asserts nothing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "daemon/network/loopback_listener.h"
#include "daemon/network/proxy_service.h"

namespace {

using namespace codexd;
using namespace codexd::network;
using Clock = std::chrono::steady_clock;

struct Options {
  uint64_t mib = 1024;
  int runs = 3;
  int connects = 500;
  int threads = 2;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

class AllowAll : public NetworkDecider {
 public:
  void decide(const ProxyOrigin&, const ConnectTarget&, std::function<void(NetworkVerdict)> done) override {
    done(NetworkVerdict{true, "bench", true, false});
  }
};

int connect_to(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    std::perror("connect");
    std::exit(1);
  }
  return fd;
}

void send_text(int fd, const std::string& text) {
  if (::send(fd, text.data(), text.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(text.size())) std::exit(1);
}

std::string read_head(int fd) {
  std::string head;
  char c;
  while (head.find("\r\n\r\n") == std::string::npos && ::recv(fd, &c, 1, 0) == 1) head.push_back(c);
  return head;
}

uint64_t read_all(int fd) {
  static std::vector<char> buffer(1 << 20);
  uint64_t total = 0;
  for (;;) {
    ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n <= 0) return total;
    total += static_cast<uint64_t>(n);
  }
}

// HTTP origin: for each connection (own thread) reads the request head and answers with
// `bytes` of body, then closes; a connection that closes first is just dropped.
void run_origin(int listen_fd, uint64_t bytes) {
  for (;;) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    std::thread([fd, bytes] {
      if (read_head(fd).find("GET") == 0) {
        std::string head = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(bytes) + "\r\nConnection: close\r\n\r\n";
        send_text(fd, head);
        static const std::vector<char> chunk(1 << 20, 'x');
        for (uint64_t left = bytes; left > 0;) {
          size_t n = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
          ssize_t sent = ::send(fd, chunk.data(), n, MSG_NOSIGNAL);
          if (sent <= 0) break;
          left -= static_cast<uint64_t>(sent);
        }
      }
      ::close(fd);
    }).detach();
  }
}

enum class Path { kDirect, kTunnel, kForward };

// MiB/s of one download.
double download(Path path, uint16_t origin_port, uint16_t proxy_port) {
  std::string origin = "127.0.0.1:" + std::to_string(origin_port);
  auto start = Clock::now();
  int fd = connect_to(path == Path::kDirect ? origin_port : proxy_port);
  if (path == Path::kTunnel) {
    send_text(fd, "CONNECT " + origin + " HTTP/1.1\r\nHost: " + origin + "\r\n\r\n");
    read_head(fd);
  }
  std::string target = path == Path::kForward ? "http://" + origin + "/big" : "/big";
  send_text(fd, "GET " + target + " HTTP/1.1\r\nHost: " + origin + "\r\n\r\n");
  uint64_t bytes = read_all(fd);
  ::close(fd);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(bytes) / (1024.0 * 1024.0) / seconds;
}

// µs to a usable connection: direct TCP connect, or proxy connect + CONNECT + 200.
double connect_latency(bool proxied, uint16_t origin_port, uint16_t proxy_port) {
  auto start = Clock::now();
  int fd = connect_to(proxied ? proxy_port : origin_port);
  if (proxied) {
    std::string origin = "127.0.0.1:" + std::to_string(origin_port);
    send_text(fd, "CONNECT " + origin + " HTTP/1.1\r\n\r\n");
    read_head(fd);
  }
  double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  ::close(fd);
  return us;
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    long value = std::atol(argv[i + 1]);
    if (flag == "--mib") options.mib = static_cast<uint64_t>(value);
    else if (flag == "--runs") options.runs = static_cast<int>(value);
    else if (flag == "--connects") options.connects = static_cast<int>(value);
    else if (flag == "--threads") options.threads = static_cast<int>(value);
  }
  return options;
}

// A proxy service with its own io threads and one HTTP listener.
struct Proxy {
  Proxy(int threads, bool splice) : work(io.get_executor()) {
    ProxyOptions options;
    options.relay_splice = splice;
    service = std::make_unique<ProxyService>(io, options, std::make_shared<AllowAll>(), nullptr);
    auto listener = listen_on_loopback();
    if (!listener.ok()) std::exit(1);
    port = listener->port;
    std::vector<ProxyListener> listeners;
    listeners.push_back(ProxyListener{std::move(listener->fd), ListenerKind::kHttp});
    attachment = std::move(service->attach(ProxyOrigin{0, "bench", 1, "proxy_bench"}, std::move(listeners))).value();
    for (int i = 0; i < threads; ++i) pool.emplace_back([this] { io.run(); });
  }
  ~Proxy() {
    attachment.reset();
    io.stop();
    for (auto& thread : pool) thread.join();
  }
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work;
  std::unique_ptr<ProxyService> service;
  std::unique_ptr<ProxyAttachment> attachment;
  std::vector<std::thread> pool;
  uint16_t port = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options options = parse(argc, argv);
  auto origin_listener = listen_on_loopback(1024);
  if (!origin_listener.ok()) return 1;
  uint16_t origin_port = origin_listener->port;
  std::thread(run_origin, origin_listener->fd.release(), options.mib << 20).detach();
  Proxy proxy(options.threads, true);
  Proxy copying(options.threads, false);

  std::printf("codexd proxy bench (%u CPUs, %d io threads, %llu MiB download, %d runs, loopback)\n",
              std::thread::hardware_concurrency(), options.threads, static_cast<unsigned long long>(options.mib),
              options.runs);
  std::vector<double> direct, tunnel, forward, tunnel_copy;
  for (int run = 0; run < options.runs; ++run) {
    direct.push_back(download(Path::kDirect, origin_port, 0));
    tunnel.push_back(download(Path::kTunnel, origin_port, proxy.port));
    forward.push_back(download(Path::kForward, origin_port, proxy.port));
    tunnel_copy.push_back(download(Path::kTunnel, origin_port, copying.port));
  }
  double base = median(direct);
  std::printf("  download direct                 %8.0f MiB/s\n", base);
  std::printf("  download via CONNECT tunnel     %8.0f MiB/s   ratio %.2fx of direct (splice relay)\n",
              median(tunnel), median(tunnel) / base);
  std::printf("  download via plain HTTP GET     %8.0f MiB/s   ratio %.2fx of direct (splice relay)\n",
              median(forward), median(forward) / base);
  std::printf("  download via CONNECT, copying   %8.0f MiB/s   ratio %.2fx of direct (read/write relay)\n",
              median(tunnel_copy), median(tunnel_copy) / base);

  std::vector<double> direct_us, proxied_us;
  for (int i = 0; i < options.connects; ++i) {
    direct_us.push_back(connect_latency(false, origin_port, proxy.port));
    proxied_us.push_back(connect_latency(true, origin_port, proxy.port));
  }
  double d = median(direct_us);
  double p = median(proxied_us);
  std::printf("  connect direct (median of %d)   %8.0f us\n", options.connects, d);
  std::printf("  connect + CONNECT + 200 reply   %8.0f us   added %.0f us\n", p, p - d);
  return 0;
}
