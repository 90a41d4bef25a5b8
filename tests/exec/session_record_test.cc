// Durable session records: a record reads back as written, and a corrupt one is refused with
// what is wrong, never turned into values that name nothing.
#include "daemon/exec/session_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.h"

namespace codexd::exec {
namespace {

using testing::read_text_file;

using ::testing::HasSubstr;

SessionRecord a_record() {
  SessionRecord record;
  record.metadata.id = 4711;
  record.metadata.owner_uid = 1000;
  record.metadata.agent_id = "agent-a";
  record.metadata.argv = {"sleep", "60"};
  record.metadata.cwd = "/work";
  record.metadata.tty = true;
  record.metadata.sandbox = sandbox::Backend::kLinuxBwrap;
  record.metadata.network = sandbox::NetworkMode::kProxy;
  record.rows = 40;
  record.cols = 132;
  return record;
}

TEST(SessionRecord, ReadsBackWhatWasWritten) {
  testing::TempDir dir("codexd-record");
  ASSERT_TRUE(write_session_record(dir.path(), a_record()).ok());
  Result<SessionRecord> read = read_session_record(dir.path());
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_EQ(read->metadata.id, 4711);
  EXPECT_EQ(read->metadata.sandbox, sandbox::Backend::kLinuxBwrap);
  EXPECT_EQ(read->metadata.network, sandbox::NetworkMode::kProxy);
  EXPECT_EQ(read->rows, 40);
  EXPECT_EQ(read->cols, 132);
}

TEST(SessionRecord, AnOutOfRangeSandboxOrNetworkIsACorruptRecord) {
  testing::TempDir dir("codexd-record");
  ASSERT_TRUE(write_session_record(dir.path(), a_record()).ok());
  const std::string path = dir.path() + "/" + kSessionRecordName;
  const std::string good = read_text_file(path);
  for (const auto& [key, bad] : {std::pair{std::string("\"sandbox\":1"), std::string("\"sandbox\":99")},
                                 std::pair{std::string("\"network\":1"), std::string("\"network\":-3")}}) {
    std::string text = good;
    const size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos) << key << " in " << good;
    text.replace(at, key.size(), bad);
    std::ofstream(path, std::ios::trunc) << text;
    Result<SessionRecord> read = read_session_record(dir.path());
    ASSERT_FALSE(read.ok()) << bad;
    EXPECT_THAT(read.status().message(), HasSubstr(path)) << bad;
    EXPECT_THAT(read.status().message(), HasSubstr(key.substr(1, key.find('"', 1) - 1))) << bad;
  }
}

}  // namespace
}  // namespace codexd::exec
