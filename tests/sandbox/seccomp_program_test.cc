// The daemon's compiled seccomp programs: the cache and its key, the memfd's format, and the
// helper's checks of what it is given (it must refuse anything but a sealed, well-formed
// program, and exit 126 then).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "platform/linux/helper_config.h"
#include "platform/linux/seccomp_filter.h"
#include "platform/linux/seccomp_program.h"
#include "platform/linux/seccomp_program_cache.h"
#include "platform/posix/spawn.h"
#include "tests/sandbox/sandbox_test_support.h"

namespace codexd::sandbox::linux_backend {
namespace {

HelperConfig keeper_config() {
  HelperConfig config;
  config.mode = HelperMode::kBwrap;
  config.network = NetworkMode::kOff;
  config.metadata_keeper = true;
  return config;
}

// A memfd holding `bytes`, sealed with `seals`.
UniqueFd memfd_with(const std::string& bytes, int seals) {
  UniqueFd fd(::memfd_create("test-program", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  EXPECT_TRUE(fd.valid());
  EXPECT_EQ(::write(fd.get(), bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  if (seals != 0) {
    EXPECT_EQ(::fcntl(fd.get(), F_ADD_SEALS, seals), 0);
  }
  return fd;
}

UniqueFd sealed(const std::string& bytes) { return memfd_with(bytes, required_program_seals()); }

std::string valid_bytes(bool keeper) {
  SeccompPrograms programs;
  programs.command = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  if (keeper) programs.keeper = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  return encode_seccomp_programs(programs);
}

// Sets the header's counts of encoded programs.
std::string with_counts(std::string bytes, uint32_t command, uint32_t keeper) {
  std::memcpy(bytes.data() + 8, &command, 4);
  std::memcpy(bytes.data() + 12, &keeper, 4);
  return bytes;
}

TEST(SeccompProgramCache, OneProgramPerSetOfRules) {
  SeccompProgramCache cache;
  HelperConfig a = keeper_config();
  Result<std::shared_ptr<const UniqueFd>> first = cache.get(a);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  // What does not decide the rules does not make another program.
  HelperConfig same_rules = a;
  same_rules.writable = {"/work"};
  same_rules.command = {"/bin/true"};
  same_rules.init = true;
  same_rules.console_fd = 4;
  Result<std::shared_ptr<const UniqueFd>> again = cache.get(same_rules);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(first->get(), again->get());
  EXPECT_EQ(cache.size(), 1U);

  for (auto change : std::vector<void (*)(HelperConfig&)>{
           [](HelperConfig& c) { c.network = NetworkMode::kProxy; },
           [](HelperConfig& c) { c.network = NetworkMode::kHost; },
           [](HelperConfig& c) { c.mode = HelperMode::kLandlock; },
           [](HelperConfig& c) { c.block_unix_sockets = true; },
           [](HelperConfig& c) { c.metadata_keeper = false; },
           [](HelperConfig& c) {
             c.metadata_keeper = false;
             c.supervise_exec = true;
           }}) {
    HelperConfig other = a;
    change(other);
    EXPECT_FALSE(SeccompRulesKey::of(other) == SeccompRulesKey::of(a));
    Result<std::shared_ptr<const UniqueFd>> program = cache.get(other);
    ASSERT_TRUE(program.ok()) << program.status().to_string();
    EXPECT_NE(program->get(), first->get());
  }
  EXPECT_EQ(cache.size(), 7U);
}

TEST(SeccompProgramCache, HoldsExactlyWhatLibseccompCompiles) {
  for (bool keeper : {true, false}) {
    HelperConfig config = keeper_config();
    config.metadata_keeper = keeper;
    Result<UniqueFd> fd = make_seccomp_program_fd(config);
    ASSERT_TRUE(fd.ok()) << fd.status().to_string();
    EXPECT_EQ(::fcntl(fd->get(), F_GET_SEALS) & required_program_seals(), required_program_seals());
    EXPECT_NE(::fcntl(fd->get(), F_GETFD) & FD_CLOEXEC, 0);
    Result<SeccompPrograms> read = read_seccomp_programs(fd->get(), keeper);
    ASSERT_TRUE(read.ok()) << read.status().to_string();
    Result<std::vector<sock_filter>> command = compile_seccomp_program(config, FilterRole::kCommand);
    ASSERT_TRUE(command.ok());
    ASSERT_EQ(read->command.size(), command->size());
    EXPECT_EQ(std::memcmp(read->command.data(), command->data(), command->size() * sizeof(sock_filter)), 0);
    if (keeper) {
      Result<std::vector<sock_filter>> keeper_program = compile_seccomp_program(config, FilterRole::kKeeper);
      ASSERT_TRUE(keeper_program.ok());
      ASSERT_EQ(read->keeper.size(), keeper_program->size());
      EXPECT_EQ(std::memcmp(read->keeper.data(), keeper_program->data(), keeper_program->size() * sizeof(sock_filter)), 0);
    } else {
      EXPECT_TRUE(read->keeper.empty());
    }
  }
}

TEST(SeccompProgram, ReadsAWellFormedProgram) {
  UniqueFd fd = sealed(valid_bytes(true));
  Result<SeccompPrograms> read = read_seccomp_programs(fd.get(), true);
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_EQ(read->command.size(), 1U);
  EXPECT_EQ(read->keeper.size(), 1U);
}

TEST(SeccompProgram, RefusesAnythingElse) {
  std::string bad_magic = valid_bytes(false);
  bad_magic[0] = 'X';
  std::string odd_size = valid_bytes(false) + "abcd";
  std::string too_many(16 + (kMaxSeccompInstructions + 1) * sizeof(sock_filter), '\0');
  std::memcpy(too_many.data(), valid_bytes(false).data(), 8);
  too_many = with_counts(too_many, static_cast<uint32_t>(kMaxSeccompInstructions + 1), 0);
  struct Case {
    const char* what;
    UniqueFd fd;
    bool keeper;
  };
  std::vector<Case> cases;
  cases.push_back({"not sealed", memfd_with(valid_bytes(false), 0), false});
  cases.push_back({"sealed against writes only", memfd_with(valid_bytes(false), F_SEAL_WRITE), false});
  cases.push_back({"empty", sealed(""), false});
  cases.push_back({"header only", sealed(with_counts(valid_bytes(false).substr(0, 16), 0, 0)), false});
  cases.push_back({"size not whole instructions", sealed(odd_size), false});
  cases.push_back({"bad magic", sealed(bad_magic), false});
  cases.push_back({"no command program", sealed(with_counts(valid_bytes(true), 0, 2)), true});
  cases.push_back({"counts larger than the file", sealed(with_counts(valid_bytes(false), 2, 0)), false});
  cases.push_back({"counts smaller than the file", sealed(with_counts(valid_bytes(true), 1, 0)), false});
  cases.push_back({"over the kernel's limit", sealed(too_many), false});
  cases.push_back({"keeper expected, none given", sealed(valid_bytes(false)), true});
  cases.push_back({"keeper given, none expected", sealed(valid_bytes(true)), false});
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  ::close(pipe_fds[1]);
  cases.push_back({"a pipe", UniqueFd(pipe_fds[0]), false});
  cases.push_back({"a regular file that is no memfd", UniqueFd(::open("/etc/passwd", O_RDONLY | O_CLOEXEC)), false});
  for (const Case& c : cases) {
    Result<SeccompPrograms> read = read_seccomp_programs(c.fd.get(), c.keeper);
    EXPECT_FALSE(read.ok()) << c.what;
    if (!read.ok()) {
      EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument) << c.what;
    }
  }
  EXPECT_FALSE(read_seccomp_programs(-1, false).ok());
  EXPECT_FALSE(read_seccomp_programs(1000, false).ok());  // not open
}

TEST(SeccompProgram, HelperConfigCarriesItsDescriptor) {
  HelperConfig config = keeper_config();
  config.seccomp_fd = posix::kSeccompFdNumber;
  config.command = {"/bin/true"};
  Result<HelperConfig> parsed = parse_helper_args(render_helper_args(config));
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_EQ(parsed->seccomp_fd, posix::kSeccompFdNumber);
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=off", "--seccomp-fd=2", "--", "x"}).ok());
  EXPECT_FALSE(parse_helper_args({"--mode=bwrap", "--network=proxy", "--channel-fd=3", "--seccomp-fd=3", "--", "x"}).ok());
}

// Runs the staged helper with `fd` (or nothing, -1) as its descriptor 6 and --seccomp-fd=6.
std::pair<int, std::string> run_helper_with(int fd, bool keeper) {
  int out[2];
  EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
  std::vector<std::string> args = {::codexd::sandbox::testing::helper_path(), "--mode=bwrap", "--network=off"};
  if (keeper) args.push_back("--metadata-keeper");
  args.insert(args.end(), {"--seccomp-fd=6", "--", "/bin/true"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    if (fd >= 0) {
      ::dup2(fd, 6);
    } else {
      ::close(6);
    }
    char* env[] = {nullptr};
    ::execve(argv[0], argv.data(), env);
    ::_exit(99);
  }
  ::close(out[1]);
  std::string output;
  char buf[512];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0) output.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), output};
}

TEST(SeccompProgram, HelperFailsClosedOnABadProgram) {
  UniqueFd unsealed = memfd_with(valid_bytes(true), 0);
  UniqueFd empty = sealed("");
  UniqueFd no_keeper = sealed(valid_bytes(false));
  for (auto [fd, what] : std::vector<std::pair<int, const char*>>{
           {-1, "no descriptor"}, {unsealed.get(), "unsealed"}, {empty.get(), "empty"}, {no_keeper.get(), "no keeper program"}}) {
    auto [code, output] = run_helper_with(fd, /*keeper=*/true);
    EXPECT_EQ(code, 126) << what << ": " << output;
    EXPECT_NE(output.find("codexd-sandbox-helper: seccomp: "), std::string::npos) << what << ": " << output;
  }
}

}  // namespace
}  // namespace codexd::sandbox::linux_backend
