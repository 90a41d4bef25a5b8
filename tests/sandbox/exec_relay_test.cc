// The exec relay's messages (platform/sandbox/exec_relay.h): what a keeper inside a sandbox
// sends the daemon is parsed as untrusted bytes.
#include "platform/sandbox/exec_relay.h"

#include <gtest/gtest.h>

namespace codexd::sandbox {
namespace {

ExecRecord sample() {
  ExecRecord record;
  record.id = 0x1234567890abcdefULL;
  record.argv_truncated = true;
  record.path = "/usr/bin/git";
  record.cwd = "/work/ws";
  record.argv = {"git", "push", "--force", std::string("with\0nul", 8), ""};
  return record;
}

TEST(ExecRelay, RecordsRoundTrip) {
  const ExecRecord record = sample();
  Result<ExecRecord> parsed = parse_exec_record(encode_exec_record(record));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->id, record.id);
  EXPECT_TRUE(parsed->readable);
  EXPECT_TRUE(parsed->argv_truncated);
  EXPECT_FALSE(parsed->by_descriptor);
  EXPECT_EQ(parsed->path, record.path);
  EXPECT_EQ(parsed->cwd, record.cwd);
  EXPECT_EQ(parsed->argv, record.argv);
}

TEST(ExecRelay, VerdictsRoundTrip) {
  for (bool allow : {false, true}) {
    Result<ExecVerdict> parsed = parse_exec_verdict(encode_exec_verdict({42, allow}));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->id, 42u);
    EXPECT_EQ(parsed->allow, allow);
  }
}

// Every cut of a valid record, and each byte changed, is refused or parsed within the bounds;
// nothing reads past the message.
TEST(ExecRelay, TruncatedOrCorruptRecordsAreRefused) {
  const std::string whole = encode_exec_record(sample());
  for (size_t size = 0; size < whole.size(); ++size) {
    EXPECT_FALSE(parse_exec_record(whole.substr(0, size)).ok()) << "cut at " << size;
  }
  EXPECT_FALSE(parse_exec_record(whole + "x").ok()) << "trailing bytes";
  for (size_t at = 0; at < whole.size(); ++at) {
    std::string changed = whole;
    changed[at] = static_cast<char>(changed[at] ^ 0xff);
    Result<ExecRecord> parsed = parse_exec_record(changed);
    if (parsed.ok()) {
      EXPECT_LE(parsed->path.size(), kMaxRecordPath);
      EXPECT_LE(parsed->argv.size(), kMaxRecordArgs);
    }
  }
}

TEST(ExecRelay, OversizedFieldsAreRefused) {
  ExecRecord record = sample();
  record.path.assign(kMaxRecordPath + 1, 'p');
  EXPECT_FALSE(parse_exec_record(encode_exec_record(record)).ok());
  record = sample();
  record.argv.assign(kMaxRecordArgs + 1, "a");
  EXPECT_FALSE(parse_exec_record(encode_exec_record(record)).ok());
  record = sample();
  record.argv = {std::string(kMaxRecordArgBytes + 1, 'a')};
  EXPECT_FALSE(parse_exec_record(encode_exec_record(record)).ok());
  EXPECT_FALSE(parse_exec_verdict("cxv1").ok());
  EXPECT_FALSE(parse_exec_verdict(encode_exec_verdict({1, true}) + "x").ok());
  std::string bad_allow = encode_exec_verdict({1, true});
  bad_allow.back() = 2;
  EXPECT_FALSE(parse_exec_verdict(bad_allow).ok());
}

}  // namespace
}  // namespace codexd::sandbox
