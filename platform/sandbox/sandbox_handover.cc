#include "platform/sandbox/sandbox_handover.h"

#include <charconv>
#include <vector>

namespace codexd::sandbox {
namespace {

constexpr std::string_view kCurrent = "codexd-sandbox/1";
constexpr std::string_view kProxyOnly = "codexd-proxy/1";

std::vector<std::string_view> words_of(std::string_view text) {
  std::vector<std::string_view> words;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    if (space != 0) words.push_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return words;
}

bool parse_port(std::string_view word, std::string_view key, uint16_t* port) {
  if (word.substr(0, key.size()) != key) return false;
  const std::string_view digits = word.substr(key.size());
  unsigned value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || value == 0 || value > 65535) return false;
  *port = static_cast<uint16_t>(value);
  return true;
}

}  // namespace

std::string encode_handover(const SandboxHandover& handover) {
  std::string out(kCurrent);
  if (handover.proxy) {
    out += " http=" + std::to_string(handover.proxy->http) + " socks=" + std::to_string(handover.proxy->socks);
  }
  if (handover.exec_relay) out += " exec-relay";
  return out;
}

std::string encode_proxy_message(ProxyPorts ports) {
  return std::string(kProxyOnly) + " http=" + std::to_string(ports.http) + " socks=" + std::to_string(ports.socks);
}

Result<SandboxHandover> parse_handover(std::string_view payload) {
  std::vector<std::string_view> words = words_of(payload);
  if (words.empty() || (words[0] != kCurrent && words[0] != kProxyOnly)) {
    return InvalidArgument("not a sandbox handover: \"" + std::string(payload.substr(0, 64)) + "\"");
  }
  const bool proxy_only = words[0] == kProxyOnly;
  SandboxHandover handover;
  size_t i = 1;
  if (i < words.size() && words[i].substr(0, 5) == "http=") {
    ProxyPorts ports;
    if (i + 1 >= words.size() || !parse_port(words[i], "http=", &ports.http) ||
        !parse_port(words[i + 1], "socks=", &ports.socks)) {
      return InvalidArgument("sandbox handover: bad proxy ports in \"" + std::string(payload.substr(0, 64)) + "\"");
    }
    handover.proxy = ports;
    i += 2;
  }
  if (!proxy_only && i < words.size() && words[i] == "exec-relay") {
    handover.exec_relay = true;
    ++i;
  }
  if (i != words.size() || (proxy_only && !handover.proxy)) {
    return InvalidArgument("sandbox handover: unexpected \"" + std::string(payload.substr(0, 64)) + "\"");
  }
  return handover;
}

}  // namespace codexd::sandbox
