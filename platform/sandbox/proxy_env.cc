#include "platform/sandbox/proxy_env.h"

#include <algorithm>

namespace codexd::sandbox {

std::vector<std::string> proxy_environment(ProxyPorts ports) {
  const std::string http = "http://127.0.0.1:" + std::to_string(ports.http);
  // socks5h: the proxy resolves the name (the sandbox has no DNS).
  const std::string socks = "socks5h://127.0.0.1:" + std::to_string(ports.socks);
  const std::string local = "localhost,127.0.0.1,::1";
  return {
      // curl reads only the lowercase http_proxy (HTTP_PROXY is ignored for CGI safety);
      // other tools read one case or the other.
      "http_proxy=" + http, "HTTP_PROXY=" + http,
      "https_proxy=" + http, "HTTPS_PROXY=" + http,
      "all_proxy=" + socks, "ALL_PROXY=" + socks,
      "no_proxy=" + local, "NO_PROXY=" + local,
      // npm and yarn have their own settings; pip reads PIP_PROXY for every index; cargo
      // reads CARGO_HTTP_PROXY (it also honours http_proxy, but not for every transport).
      "npm_config_proxy=" + http, "npm_config_https_proxy=" + http,
      "YARN_HTTP_PROXY=" + http, "YARN_HTTPS_PROXY=" + http,
      "PIP_PROXY=" + http,
      "CARGO_HTTP_PROXY=" + http,
      // go, git and wget read the variables above.
      "CODEXD_SANDBOX_PROXY=" + http,
  };
}

std::vector<std::string> with_proxy_environment(std::vector<std::string> env, ProxyPorts ports) {
  std::vector<std::string> proxy = proxy_environment(ports);
  auto set_here = [&](const std::string& entry) {
    std::string name = entry.substr(0, entry.find('='));
    return std::any_of(proxy.begin(), proxy.end(), [&](const std::string& p) {
      return p.compare(0, name.size() + 1, name + "=") == 0;
    });
  };
  env.erase(std::remove_if(env.begin(), env.end(), set_here), env.end());
  env.insert(env.end(), proxy.begin(), proxy.end());
  return env;
}

}  // namespace codexd::sandbox
