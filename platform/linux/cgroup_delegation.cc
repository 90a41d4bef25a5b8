#include "platform/linux/cgroup_delegation.h"

#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#if defined(CODEXD_HAVE_SYSTEMD)
#include <systemd/sd-bus.h>
#endif

#include "platform/linux/cgroup_files.h"

namespace codexd::limits::cgroups {

bool delegated_by_systemd(const std::string& dir) {
  for (const char* name : {"trusted.delegate", "user.delegate"}) {
    char value[8] = {};
    ssize_t n = ::getxattr(dir.c_str(), name, value, sizeof value - 1);
    if (n > 0 && value[0] == '1') return true;
  }
  return false;
}

Result<std::string> enter_daemon_leaf(const std::string& own_dir) {
  const std::string leaf = own_dir + "/daemon";
  if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) return ErrnoStatus("mkdir " + leaf, errno);
  CODEXD_RETURN_IF_ERROR(write_small_file(leaf + "/cgroup.procs", std::to_string(::getpid())));
  return leaf;
}

std::string set_memory_floor(const std::string& leaf, uint64_t memory_min) {
  if (memory_min == 0 || !path_exists(leaf + "/memory.min")) return "";
  if (!write_small_file(leaf + "/memory.min", std::to_string(memory_min)).ok()) return "";
  return "memory.min " + format_bytes(memory_min);
}

#if defined(CODEXD_HAVE_SYSTEMD)
namespace {

struct BusCall {
  sd_bus* bus = nullptr;
  sd_bus_message* request = nullptr;
  sd_bus_message* reply = nullptr;
  sd_bus_slot* slot = nullptr;
  sd_bus_error error = SD_BUS_ERROR_NULL;
  ~BusCall() {
    sd_bus_slot_unref(slot);
    sd_bus_message_unref(reply);
    sd_bus_message_unref(request);
    sd_bus_error_free(&error);
    sd_bus_flush_close_unref(bus);
  }
};

struct JobWait {
  std::string path;    // the job we wait for ("" until the call returns)
  std::string result;  // "done", "failed", ... once removed
  bool removed = false;
  std::string early_path, early_result;  // a JobRemoved that came before the reply
};

int on_job_removed(sd_bus_message* m, void* user, sd_bus_error*) {
  auto* wait = static_cast<JobWait*>(user);
  uint32_t id = 0;
  const char *path = nullptr, *unit = nullptr, *result = nullptr;
  if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0) return 0;
  if (wait->path.empty()) {
    wait->early_path = path;
    wait->early_result = result;
  } else if (wait->path == path) {
    wait->removed = true;
    wait->result = result;
  }
  return 0;
}

std::string bus_error(const char* what, int r, const sd_bus_error& error) {
  return std::string(what) + ": " + (sd_bus_error_is_set(&error) ? error.message : std::strerror(-r));
}

// The StartTransientUnit request: a scope with Delegate=yes holding only this process.
int build_request(BusCall& call, const std::string& unit) {
  int r = sd_bus_message_new_method_call(call.bus, &call.request, "org.freedesktop.systemd1",
                                         "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                         "StartTransientUnit");
  if (r < 0) return r;
  if ((r = sd_bus_message_append(call.request, "ss", unit.c_str(), "fail")) < 0) return r;
  if ((r = sd_bus_message_open_container(call.request, 'a', "(sv)")) < 0) return r;
  if ((r = sd_bus_message_append(call.request, "(sv)", "Description", "s", "codexd (sessions in a delegated cgroup)")) < 0) {
    return r;
  }
  if ((r = sd_bus_message_append(call.request, "(sv)", "Delegate", "b", 1)) < 0) return r;
  if ((r = sd_bus_message_append(call.request, "(sv)", "PIDs", "au", 1, static_cast<uint32_t>(::getpid()))) < 0) return r;
  if ((r = sd_bus_message_close_container(call.request)) < 0) return r;
  return sd_bus_message_append(call.request, "a(sa(sv))", 0);
}

Status wait_for_job(BusCall& call, JobWait& wait, int timeout_ms) {
  if (wait.early_path == wait.path) {
    wait.removed = true;
    wait.result = wait.early_result;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!wait.removed) {
    int r = sd_bus_process(call.bus, nullptr);
    if (r < 0) return Unavailable(bus_error("reading the user bus", r, call.error));
    if (r > 0) continue;
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Unavailable("systemd did not finish the scope's job in time");
    sd_bus_wait(call.bus, static_cast<uint64_t>(left.count()));
  }
  if (wait.result != "done") return Unavailable("systemd's job for the scope ended \"" + wait.result + "\"");
  return Status::Ok();
}

}  // namespace

Status move_into_delegated_scope(const std::string& unit, int timeout_ms) {
  BusCall call;
  int r = sd_bus_open_user(&call.bus);
  if (r < 0) return Unavailable(bus_error("no user bus (DBUS_SESSION_BUS_ADDRESS / $XDG_RUNTIME_DIR/bus)", r, call.error));
  JobWait wait;
  r = sd_bus_match_signal(call.bus, &call.slot, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                          "org.freedesktop.systemd1.Manager", "JobRemoved", on_job_removed, &wait);
  if (r < 0) return Unavailable(bus_error("subscribing to systemd's JobRemoved", r, call.error));
  if ((r = build_request(call, unit)) < 0) return Internal(bus_error("building StartTransientUnit", r, call.error));
  r = sd_bus_call(call.bus, call.request, uint64_t{static_cast<uint64_t>(timeout_ms)} * 1000, &call.error, &call.reply);
  if (r < 0) return Unavailable(bus_error("the user's systemd refused StartTransientUnit", r, call.error));
  const char* job = nullptr;
  if ((r = sd_bus_message_read(call.reply, "o", &job)) < 0) return Internal(bus_error("reading the job", r, call.error));
  wait.path = job;
  return wait_for_job(call, wait, timeout_ms);
}
#else
Status move_into_delegated_scope(const std::string&, int) {
  return Unavailable("built without libsystemd: cannot ask systemd for a delegated scope");
}
#endif

}  // namespace codexd::limits::cgroups
