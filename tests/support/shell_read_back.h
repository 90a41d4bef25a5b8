// What a shell makes of a quoted command line: the words it reads back. Proves that text meant
// to show an argv unambiguously (base/shell_quote.h, the approvals view) means that argv.
#pragma once

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

extern char** environ;

namespace codexd::testing {

// Runs `shell -c "printf '%s\0' <text>"` and splits what it prints at the NULs.
inline std::vector<std::string> words_read_back_by(const char* shell, const std::string& text) {
  int out[2];
  if (::pipe(out) != 0) return {"<pipe failed>"};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::string script = "printf '%s\\0' " + text;
  std::vector<char*> argv = {const_cast<char*>(shell), const_cast<char*>("-c"), script.data(), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, shell, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  std::string bytes;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0) bytes.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  if (rc != 0) return {"<spawn failed>"};
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::vector<std::string> words;
  size_t start = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == '\0') {
      words.push_back(bytes.substr(start, i - start));
      start = i + 1;
    }
  }
  return words;
}

}  // namespace codexd::testing
