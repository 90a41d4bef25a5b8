// "Approved for session": the key (Codex's shape), its scope (uid + agent id) and its bound.
#include "daemon/orchestrator/approval_cache.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "policies/approval_key.h"

namespace codexd::orchestrator {
namespace {

std::string key_for(std::vector<std::string> argv, std::string cwd = "/w", bool tty = false,
                    bool escalated = false, bool include_tty = true) {
  ApprovalKeyInput in;
  in.argv = policy::canonicalize_command_for_approval(argv);
  in.cwd = std::move(cwd);
  in.tty = tty;
  in.require_escalated = escalated;
  in.include_tty = include_tty;
  return approval_cache_key(in);
}

TEST(ApprovalCacheKey, UnifiedExecKeyHasCommandCwdTtyAndSandboxPermissionsInCodexOrder) {
  EXPECT_EQ(key_for({"ls", "-la"}),
            R"({"command":["ls","-la"],"cwd":"/w","tty":false,"sandbox_permissions":"use_default"})");
  EXPECT_EQ(key_for({"ls"}, "/w", true, true),
            R"({"command":["ls"],"cwd":"/w","tty":true,"sandbox_permissions":"require_escalated"})");
}

TEST(ApprovalCacheKey, ShellCommandKeyHasNoTty) {
  EXPECT_EQ(key_for({"ls"}, "/w", true, false, false),
            R"({"command":["ls"],"cwd":"/w","sandbox_permissions":"use_default"})");
}

TEST(ApprovalCacheKey, AScriptWithOnePlainCommandIsKeyedByThatCommand) {
  EXPECT_EQ(key_for({"bash", "-lc", "ls -la"}), key_for({"ls", "-la"}));
  EXPECT_EQ(key_for({"/bin/sh", "-c", "'git' status"}), key_for({"git", "status"}));
}

TEST(ApprovalCacheKey, AnyOtherScriptIsKeyedByTheWholeScript) {
  auto parsed = nlohmann::json::parse(key_for({"bash", "-lc", "ls && rm -f x"}));
  EXPECT_EQ(parsed["command"], nlohmann::json::array({"__codex_shell_script__", "-lc", "ls && rm -f x"}));
  EXPECT_NE(key_for({"bash", "-lc", "ls && rm -f x"}), key_for({"bash", "-lc", "ls && rm -f y"}));
  EXPECT_NE(key_for({"bash", "-lc", "echo $HOME"}), key_for({"echo", "$HOME"}));
}

TEST(ApprovalCacheKey, EveryFieldTellsKeysApart) {
  const std::string base = key_for({"make"});
  EXPECT_NE(base, key_for({"make", "install"}));
  EXPECT_NE(base, key_for({"make"}, "/other"));
  EXPECT_NE(base, key_for({"make"}, "/w", true));
  EXPECT_NE(base, key_for({"make"}, "/w", false, true));
}

TEST(ApprovalCacheKey, HostileTextStaysInsideTheJsonStrings) {
  // A quote or brace in an argument cannot forge another key.
  const std::string k = key_for({"echo", R"(","cwd":"/etc)"});
  auto parsed = nlohmann::json::parse(k);
  EXPECT_EQ(parsed["cwd"], "/w");
  EXPECT_EQ(parsed["command"][1], R"(","cwd":"/etc)");
  // Invalid UTF-8 is replaced, not a crash, and still distinct from the empty argument.
  EXPECT_NO_THROW(nlohmann::json::parse(key_for({"echo", "\xff\xfe"})));
  EXPECT_NE(key_for({"echo", "\xff"}), key_for({"echo", ""}));
}

TEST(ApprovalCache, ApprovalIsScopedToUidAndAgent) {
  ApprovalCache cache(16);
  const std::string k = key_for({"make"});
  EXPECT_FALSE(cache.is_approved(1000, "agent-a", k));
  cache.approve(1000, "agent-a", k);
  EXPECT_TRUE(cache.is_approved(1000, "agent-a", k));
  EXPECT_FALSE(cache.is_approved(1000, "agent-b", k)) << "another agent of the same uid";
  EXPECT_FALSE(cache.is_approved(1001, "agent-a", k)) << "the same agent label from another uid";
  EXPECT_FALSE(cache.is_approved(1000, "", k)) << "an unlabelled client";
  EXPECT_FALSE(cache.is_approved(1000, "agent-a", key_for({"make", "install"})));
  EXPECT_EQ(cache.size(1000, "agent-a"), 1u);
  EXPECT_EQ(cache.size(1000, "agent-b"), 0u);
}

TEST(ApprovalCache, EachScopeIsBoundedLeastRecentlyUsedFirst) {
  ApprovalCache cache(2);
  const std::string k1 = key_for({"a"}), k2 = key_for({"b"}), k3 = key_for({"c"});
  cache.approve(7, "x", k1);
  cache.approve(7, "x", k2);
  EXPECT_TRUE(cache.is_approved(7, "x", k1));  // k1 is now the most recently used
  cache.approve(7, "x", k3);                   // evicts k2
  EXPECT_EQ(cache.size(7, "x"), 2u);
  EXPECT_TRUE(cache.is_approved(7, "x", k1));
  EXPECT_FALSE(cache.is_approved(7, "x", k2));
  EXPECT_TRUE(cache.is_approved(7, "x", k3));
  // Re-approving an existing key does not grow the scope.
  cache.approve(7, "x", k3);
  EXPECT_EQ(cache.size(7, "x"), 2u);
  // Another scope has its own bound: filling it evicts nothing here.
  cache.approve(8, "x", k1);
  cache.approve(8, "x", k2);
  cache.approve(8, "x", k3);
  EXPECT_EQ(cache.size(8, "x"), 2u);
  EXPECT_TRUE(cache.is_approved(7, "x", k1));
  EXPECT_TRUE(cache.is_approved(7, "x", k3));
}

TEST(ApprovalCache, ManyEntriesStayBounded) {
  ApprovalCache cache(100);
  for (int i = 0; i < 10'000; ++i) cache.approve(1, "a", key_for({"cmd", std::to_string(i)}));
  EXPECT_EQ(cache.size(1, "a"), 100u);
  EXPECT_TRUE(cache.is_approved(1, "a", key_for({"cmd", "9999"})));
  EXPECT_FALSE(cache.is_approved(1, "a", key_for({"cmd", "9899"})));
  EXPECT_TRUE(cache.is_approved(1, "a", key_for({"cmd", "9900"})));
}

TEST(ApprovalCache, ZeroEntriesDisablesTheCache) {
  ApprovalCache cache(0);
  cache.approve(1, "a", key_for({"make"}));
  EXPECT_FALSE(cache.is_approved(1, "a", key_for({"make"})));
  EXPECT_EQ(cache.size(1, "a"), 0u);
}

}  // namespace
}  // namespace codexd::orchestrator
