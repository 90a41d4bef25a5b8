#include "tests/system/system_env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace codexd::testing {
namespace {

std::unique_ptr<SystemEnv>& instance() {
  static std::unique_ptr<SystemEnv> env;
  return env;
}

void build(SystemEnv& env) {
  if (::geteuid() != 0) {
    env.why_not = "system tests need root (they create users and run codexd in system mode)";
    return;
  }
  for (const char* tool : {"/usr/sbin/useradd", "/usr/sbin/userdel", "/usr/sbin/groupadd", "/usr/sbin/groupdel"}) {
    if (::access(tool, X_OK) != 0) {
      env.why_not = std::string(tool) + " is missing (package passwd)";
      return;
    }
  }
  if (::access(TestDaemon::codexd_binary().c_str(), X_OK) != 0) {
    env.why_not = "codexd binary not built: " + TestDaemon::codexd_binary();
    return;
  }
  try {
    env.root = std::make_unique<TempRoot>();
  } catch (const std::runtime_error& e) {
    env.why_not = std::string("cannot create a directory under /var/tmp: ") + e.what();
    return;
  }
  env.users = std::make_unique<TestUsers>("cxdt");
  auto sock = env.users->add_group("s");
  auto extra = env.users->add_group("x");
  if (!sock || !extra) {
    env.why_not = env.users->error();
    return;
  }
  env.socket_group = env.users->unique_name("s");
  env.extra_group = env.users->unique_name("x");
  auto a = env.users->add_user("a", env.root->path() + "/home-a", {env.socket_group, env.extra_group});
  auto b = env.users->add_user("b", env.root->path() + "/home-b", {env.socket_group});
  if (!a || !b) {
    env.why_not = env.users->error();
    return;
  }
  env.a = *a;
  env.b = *b;
  for (const TestUser* u : {&env.a, &env.b}) {
    std::string ws = u->home + "/ws";
    std::filesystem::create_directories(ws);
    if (::chown(ws.c_str(), u->uid, u->gid) != 0 || ::chmod(ws.c_str(), 0755) != 0) {
      env.why_not = "cannot prepare " + ws;
      return;
    }
    (u == &env.a ? env.a_ws : env.b_ws) = ws;
  }
  env.ready = true;
}

}  // namespace

SystemEnv& system_env() {
  auto& env = instance();
  if (!env) {
    env = std::make_unique<SystemEnv>();
    build(*env);
  }
  return *env;
}

void tear_down_system_env() {
  auto& env = instance();
  if (!env) return;
  env->users.reset();  // userdel -r, groupdel
  env->root.reset();
  env.reset();
}

std::string make_daemon_dir() {
  std::string dir = make_temp_dir(system_env().root->path(), "d", 0755);
  std::filesystem::create_directories(dir + "/rules");
  ::chmod((dir + "/rules").c_str(), 0755);
  return dir;
}

std::string system_mode_config(const std::string& dir, const std::string& daemon_extra, const std::string& tail,
                               const std::string& approval_policy) {
  std::ostringstream c;
  c << "[daemon]\n"
    << "mode = \"system\"\n"
    << "listen = \"unix:" << socket_of(dir) << "\"\n"
    << "socket_group = \"" << system_env().socket_group << "\"\n"
    << "log_level = \"debug\"\n"
    << daemon_extra << "\n"
    << "[policy]\n"
    << "rules_dirs = [\"" << dir << "/rules\"]\n"
    << "approval_policy = \"" << approval_policy << "\"\n"
    << "[sandbox]\n"
    << "mode = \"workspace-write\"\n"
    << "private_tmp_dir = \"" << dir << "/private-tmp\"\n"
    << "[audit]\n"
    << "log_file = \"" << dir << "/audit.log\"\n"
    << tail << "\n";
  return c.str();
}

}  // namespace codexd::testing
