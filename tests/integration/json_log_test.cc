// log_format = "json": every line the daemon writes is one JSON object with ts, level, pid and
// msg, whatever the message holds (here a rules file whose name has a `"` and a control
// character, reported by a failed reload).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/integration/daemon_options.h"
#include "tests/integration/exec_client.h"

namespace codexd::testing {
namespace {

using ::testing::HasSubstr;

TEST(JsonLog, EveryLineIsOneJsonObjectWhateverTheMessageHolds) {
  TestDaemonOptions options = unsandboxed();
  options.daemon_config = "log_format = \"json\"";
  TestDaemon daemon(options);
  ASSERT_TRUE(daemon.started()) << daemon.daemon_log();
  const std::string awkward = daemon.dir() + "/rules/bad\"name\x01.rules";
  std::ofstream(awkward) << "prefix_rule(pattern = [\"git\"], decision = \"sometimes\")\n";
  ASSERT_TRUE(daemon.signal_and_wait_ready(SIGHUP)) << daemon.daemon_log();
  auto stub = v1::Exec::NewStub(daemon.channel());
  ASSERT_TRUE(exec_command(*stub, argv_request(daemon, {"/bin/true"})).status.ok());
  stub.reset();  // an open connection would hold the shutdown for its grace
  EXPECT_EQ(daemon.stop(), 0);

  std::istringstream log(daemon.daemon_log());
  std::string line;
  size_t lines = 0;
  bool saw_reload_error = false;
  while (std::getline(log, line)) {
    ++lines;
    auto object = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(object.is_object()) << "line " << lines << " is not a JSON object: " << line;
    for (const char* key : {"ts", "level", "pid", "msg"}) EXPECT_TRUE(object.contains(key)) << key << " missing: " << line;
    EXPECT_EQ(object["pid"], daemon.pid()) << line;
    EXPECT_THAT(object["ts"].get<std::string>(), ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{3}[+-][0-9]{2}:[0-9]{2}"));
    const std::string msg = object["msg"].get<std::string>();
    if (object["level"] == "error" && msg.find("policy reload (SIGHUP) failed") != std::string::npos) {
      saw_reload_error = true;
      EXPECT_THAT(msg, HasSubstr(awkward)) << "the path comes back intact once parsed";
    }
  }
  EXPECT_GT(lines, 5u);
  EXPECT_TRUE(saw_reload_error) << daemon.daemon_log();
}

}  // namespace
}  // namespace codexd::testing
