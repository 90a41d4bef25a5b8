// The generated SBPL against expected texts, per sandbox shape: read-only, workspace-write
// with protected paths, network on/off, denied reads, codexd's socket directory, and hostile
// paths that try to inject SBPL.
#include <gtest/gtest.h>

#include "platform/macos/sbpl_resources.h"
#include "platform/macos/seatbelt_policy.h"
#include "tests/macos/sbpl_reader.h"
#include "tests/macos/seatbelt_test_util.h"

namespace codexd::sandbox::macos_backend::testing {
namespace {

SeatbeltPolicy build_ok(const SandboxSpec& spec, const SeatbeltOptions& options = identity_options()) {
  Result<SeatbeltPolicy> policy = build_seatbelt_policy(spec, options);
  EXPECT_TRUE(policy.ok()) << policy.status().to_string();
  if (!policy.ok()) return {};
  expect_well_formed(*policy);
  return std::move(policy).value();
}

constexpr const char* kFullRead = "; reads: the whole filesystem\n(allow file-read*)\n";
constexpr const char* kNetworkOff = "; network: off\n";

TEST(SeatbeltPolicy, ReadOnly) {
  SeatbeltPolicy policy = build_ok(read_only_spec());
  EXPECT_EQ(dynamic_part(policy.text), std::string(kFullRead) + "\n" +
                                           "; writes: none\n"
                                           "\n" +
                                           kNetworkOff);
  EXPECT_TRUE(policy.params.empty());
  EXPECT_EQ(policy.rules, (std::vector<std::string>{"seatbelt read: everything",
                                                     "seatbelt write: nothing (only /dev/null)",
                                                     "seatbelt network: blocked"}));
}

TEST(SeatbeltPolicy, WorkspaceWriteTwoRootsWithProtectedPaths) {
  SandboxSpec spec = workspace_spec({
      {"/private/tmp", {}},
      {"/Users/alice/project",
       {"/Users/alice/project/.git", "/Users/alice/worktrees/main/.git/worktrees/feature",
        "/Users/alice/project/.codex", "/Users/alice/project/.agents"}},
  });
  SeatbeltPolicy policy = build_ok(spec);
  const char* expected_writes = R"(; writes: the writable roots, minus protected metadata and denied paths
(allow file-write*
  (subpath (param "WRITABLE_ROOT_0"))
  (require-all (subpath (param "WRITABLE_ROOT_1"))
    (require-not (literal (param "WRITABLE_ROOT_1_EXCLUDED_0")))
    (require-not (subpath (param "WRITABLE_ROOT_1_EXCLUDED_0")))
    (require-not (literal (param "WRITABLE_ROOT_1_EXCLUDED_1")))
    (require-not (subpath (param "WRITABLE_ROOT_1_EXCLUDED_1")))
    (require-not (literal (param "WRITABLE_ROOT_1_EXCLUDED_2")))
    (require-not (subpath (param "WRITABLE_ROOT_1_EXCLUDED_2")))
    (require-not (literal (param "WRITABLE_ROOT_1_EXCLUDED_3")))
    (require-not (subpath (param "WRITABLE_ROOT_1_EXCLUDED_3")))))
)";
  EXPECT_EQ(dynamic_part(policy.text), std::string(kFullRead) + "\n" + expected_writes + "\n" + kNetworkOff);
  std::vector<SeatbeltParam> expected_params = {
      {"WRITABLE_ROOT_0", "/private/tmp"},
      {"WRITABLE_ROOT_1", "/Users/alice/project"},
      {"WRITABLE_ROOT_1_EXCLUDED_0", "/Users/alice/project/.git"},
      {"WRITABLE_ROOT_1_EXCLUDED_1", "/Users/alice/worktrees/main/.git/worktrees/feature"},
      {"WRITABLE_ROOT_1_EXCLUDED_2", "/Users/alice/project/.codex"},
      {"WRITABLE_ROOT_1_EXCLUDED_3", "/Users/alice/project/.agents"},
  };
  EXPECT_EQ(policy.params, expected_params);
}

TEST(SeatbeltPolicy, NetworkOnAddsTheNetworkSectionOnly) {
  SandboxSpec spec = workspace_spec({{"/Users/alice/project", {}}}, /*network=*/true);
  SeatbeltOptions options = identity_options();
  options.darwin_user_cache_dir = "/private/var/folders/zz/abc/C";
  SeatbeltPolicy on = build_ok(spec, options);
  std::string expected_network = std::string("; network: on\n(allow network-outbound)\n(allow network-inbound)\n") +
                                 std::string(network_policy_sbpl()) +
                                 "(allow file-write* (subpath (param \"DARWIN_USER_CACHE_DIR\")))\n";
  std::string writes =
      "; writes: the writable roots, minus protected metadata and denied paths\n"
      "(allow file-write*\n  (subpath (param \"WRITABLE_ROOT_0\")))\n";
  EXPECT_EQ(dynamic_part(on.text), std::string(kFullRead) + "\n" + writes + "\n" + expected_network);
  EXPECT_EQ(on.params, (std::vector<SeatbeltParam>{{"WRITABLE_ROOT_0", "/Users/alice/project"},
                                                   {"DARWIN_USER_CACHE_DIR", "/private/var/folders/zz/abc/C"}}));

  spec.network = NetworkMode::kOff;
  SeatbeltPolicy off = build_ok(spec, options);
  EXPECT_EQ(dynamic_part(off.text), std::string(kFullRead) + "\n" + writes + "\n" + kNetworkOff);
  EXPECT_EQ(off.params, (std::vector<SeatbeltParam>{{"WRITABLE_ROOT_0", "/Users/alice/project"}}));
  for (const char* word : {"network-outbound", "network-inbound", "system-socket", "network*"}) {
    EXPECT_EQ(off.text.find(word), std::string::npos) << word << " appears with the network off";
  }
}

TEST(SeatbeltPolicy, NetworkOnWithoutCacheDirHasNoDanglingParameter) {
  SeatbeltPolicy policy = build_ok(workspace_spec({}, /*network=*/true));
  EXPECT_EQ(policy.text.find("DARWIN_USER_CACHE_DIR"), std::string::npos);
  EXPECT_NE(policy.text.find("(allow network-outbound)\n"), std::string::npos);
}

TEST(SeatbeltPolicy, DeniedReadsAreExcludedFromReadsAndFromOverlappingWrites) {
  SandboxSpec spec = workspace_spec({{"/Users/alice/project", {"/Users/alice/project/.git"}},
                                     {"/private/tmp", {}}});
  spec.denied_read = {"/Users/alice/.ssh", "/Users/alice/project/secrets"};
  SeatbeltPolicy policy = build_ok(spec);
  const char* expected = R"(; reads: the whole filesystem except the denied paths
(allow file-read*
  (require-all (subpath (param "READABLE_ROOT_0"))
    (require-not (literal (param "READABLE_ROOT_0_EXCLUDED_0")))
    (require-not (subpath (param "READABLE_ROOT_0_EXCLUDED_0")))
    (require-not (literal (param "READABLE_ROOT_0_EXCLUDED_1")))
    (require-not (subpath (param "READABLE_ROOT_0_EXCLUDED_1")))))

; writes: the writable roots, minus protected metadata and denied paths
(allow file-write*
  (require-all (subpath (param "WRITABLE_ROOT_0"))
    (require-not (literal (param "WRITABLE_ROOT_0_EXCLUDED_0")))
    (require-not (subpath (param "WRITABLE_ROOT_0_EXCLUDED_0")))
    (require-not (literal (param "WRITABLE_ROOT_0_EXCLUDED_1")))
    (require-not (subpath (param "WRITABLE_ROOT_0_EXCLUDED_1"))))
  (subpath (param "WRITABLE_ROOT_1")))

; network: off
)";
  EXPECT_EQ(dynamic_part(policy.text), expected);
  std::vector<SeatbeltParam> expected_params = {
      {"READABLE_ROOT_0", "/"},
      {"READABLE_ROOT_0_EXCLUDED_0", "/Users/alice/.ssh"},
      {"READABLE_ROOT_0_EXCLUDED_1", "/Users/alice/project/secrets"},
      {"WRITABLE_ROOT_0", "/Users/alice/project"},
      {"WRITABLE_ROOT_0_EXCLUDED_0", "/Users/alice/project/.git"},
      {"WRITABLE_ROOT_0_EXCLUDED_1", "/Users/alice/project/secrets"},
      {"WRITABLE_ROOT_1", "/private/tmp"},
  };
  EXPECT_EQ(policy.params, expected_params);
  EXPECT_EQ(policy.rules.front(), "seatbelt read: / (except /Users/alice/.ssh /Users/alice/project/secrets)");
}

TEST(SeatbeltPolicy, DeniedAncestorMakesTheWholeRootReadOnly) {
  SandboxSpec spec = workspace_spec({{"/Users/alice/secret/project", {}}});
  spec.denied_read = {"/Users/alice/secret"};
  SeatbeltPolicy policy = build_ok(spec);
  EXPECT_EQ(policy.params, (std::vector<SeatbeltParam>{
                               {"READABLE_ROOT_0", "/"},
                               {"READABLE_ROOT_0_EXCLUDED_0", "/Users/alice/secret"},
                               {"WRITABLE_ROOT_0", "/Users/alice/secret/project"},
                               {"WRITABLE_ROOT_0_EXCLUDED_0", "/Users/alice/secret"},
                           }));
  EXPECT_NE(policy.text.find("(require-not (subpath (param \"WRITABLE_ROOT_0_EXCLUDED_0\")))"), std::string::npos);
}

TEST(SeatbeltPolicy, CodexdSocketDirectoryIsDeniedLastEvenWithNetwork) {
  SandboxSpec spec = workspace_spec({{"/Users/alice/project", {}}}, /*network=*/true);
  spec.masked_paths = {"/private/var/run/codexd"};
  SeatbeltPolicy policy = build_ok(spec);
  const char* expected_tail = R"(
; codexd's own sockets: unreachable, whatever was allowed above
(deny file-read* file-write* (subpath (param "MASKED_PATH_0")))
(deny network-outbound (remote unix-socket (subpath (param "MASKED_PATH_0"))))
)";
  ASSERT_TRUE(policy.text.ends_with(expected_tail)) << policy.text;
  EXPECT_LT(policy.text.find("(allow network-outbound)"), policy.text.find("(deny network-outbound"));
  EXPECT_EQ(policy.params, (std::vector<SeatbeltParam>{
                               {"READABLE_ROOT_0", "/"},
                               {"READABLE_ROOT_0_EXCLUDED_0", "/private/var/run/codexd"},
                               {"WRITABLE_ROOT_0", "/Users/alice/project"},
                               {"MASKED_PATH_0", "/private/var/run/codexd"},
                           }));
}

TEST(SeatbeltPolicy, HostilePathsCannotInjectSbpl) {
  const std::string hostile_root =
      "/Users/eve/a\"b) (allow default)\n(allow file-write* (regex #\"^.*\")) ;c \\ d";
  const std::string hostile_denied = "/Users/eve/x\")))(allow file-read*";
  SandboxSpec benign = workspace_spec({{"/Users/eve/plain", {"/Users/eve/plain/.git"}}});
  benign.denied_read = {"/Users/eve/secret"};
  SandboxSpec hostile = workspace_spec({{hostile_root, {hostile_root + "/.git"}}});
  hostile.denied_read = {hostile_denied};

  SeatbeltPolicy expected = build_ok(benign);
  SeatbeltPolicy policy = build_ok(hostile);
  // Same shape, same text: the paths never reach the policy, only the parameter values.
  EXPECT_EQ(policy.text, expected.text);
  EXPECT_EQ(policy.text.find("(allow default)"), std::string::npos);
  EXPECT_EQ(policy.text.find("Users/eve"), std::string::npos);
  ASSERT_EQ(policy.params.size(), 4u);
  EXPECT_EQ(policy.params[1].value, hostile_denied);
  EXPECT_EQ(policy.params[2].value, hostile_root);
  EXPECT_EQ(policy.params[3].value, hostile_root + "/.git");
}

TEST(SeatbeltPolicy, PathsWithSpacesAndQuotesStayIntact) {
  SandboxSpec spec = workspace_spec({{"/Users/alice/My Project's \"dir\"", {"/Users/alice/My Project's \"dir\"/.git"}}});
  SeatbeltPolicy policy = build_ok(spec);
  EXPECT_EQ(policy.params, (std::vector<SeatbeltParam>{
                               {"WRITABLE_ROOT_0", "/Users/alice/My Project's \"dir\""},
                               {"WRITABLE_ROOT_0_EXCLUDED_0", "/Users/alice/My Project's \"dir\"/.git"},
                           }));
}

TEST(SeatbeltPolicy, PathsAreResolvedBeforeTheyBecomeParameters) {
  // A stand-in for macOS's /var -> /private/var and /tmp -> /private/tmp links.
  SeatbeltOptions options;
  options.resolve = [](const std::string& path) -> Result<std::string> {
    for (const char* link : {"/var", "/tmp"}) {
      std::string prefix = link;
      if (path == prefix || path.starts_with(prefix + "/")) return "/private" + path;
    }
    return path;
  };
  SandboxSpec spec = workspace_spec({{"/var/folders/x/ws", {"/var/folders/x/ws/.codex"}}, {"/tmp", {}}});
  spec.denied_read = {"/var/folders/x/ws/secret/../secret"};
  SeatbeltPolicy policy = build_ok(spec, options);
  EXPECT_EQ(policy.params, (std::vector<SeatbeltParam>{
                               {"READABLE_ROOT_0", "/"},
                               {"READABLE_ROOT_0_EXCLUDED_0", "/private/var/folders/x/ws/secret"},
                               {"WRITABLE_ROOT_0", "/private/var/folders/x/ws"},
                               {"WRITABLE_ROOT_0_EXCLUDED_0", "/private/var/folders/x/ws/.codex"},
                               {"WRITABLE_ROOT_0_EXCLUDED_1", "/private/var/folders/x/ws/secret"},
                               {"WRITABLE_ROOT_1", "/private/tmp"},
                           }));
}

TEST(SeatbeltPolicy, DuplicateRootsAfterResolutionAppearOnce) {
  SeatbeltPolicy policy = build_ok(workspace_spec({{"/private/tmp", {}}, {"/private/tmp/", {}}}));
  EXPECT_EQ(policy.params, (std::vector<SeatbeltParam>{{"WRITABLE_ROOT_0", "/private/tmp"}}));
}

TEST(SeatbeltPolicy, RefusesWhatItCannotExpress) {
  SandboxSpec danger;
  danger.mode = SandboxMode::kDangerFullAccess;
  EXPECT_EQ(build_seatbelt_policy(danger, identity_options()).status().code(), StatusCode::kInvalidArgument);

  EXPECT_EQ(build_seatbelt_policy(workspace_spec({{"/", {}}}), identity_options()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(build_seatbelt_policy(workspace_spec({{"/a/..", {}}}), identity_options()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(build_seatbelt_policy(workspace_spec({{"relative/root", {}}}), identity_options()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(build_seatbelt_policy(workspace_spec({{std::string("/a\0b", 4), {}}}), identity_options()).status().code(),
            StatusCode::kInvalidArgument);
  SandboxSpec bad_denied = read_only_spec();
  bad_denied.denied_read = {"secrets"};
  EXPECT_EQ(build_seatbelt_policy(bad_denied, identity_options()).status().code(), StatusCode::kInvalidArgument);

  SeatbeltOptions failing;
  failing.resolve = [](const std::string& path) -> Result<std::string> {
    return PermissionDenied("realpath " + path + ": permission denied");
  };
  Result<SeatbeltPolicy> policy = build_seatbelt_policy(workspace_spec({{"/Users/a", {}}}), failing);
  EXPECT_EQ(policy.status().code(), StatusCode::kPermissionDenied) << "a resolution error must fail closed";
}

TEST(SeatbeltBasePolicy, DeniesByDefaultAndGrantsNoFilesOrNetwork) {
  SbplReadResult read = read_sbpl(std::string(base_policy_sbpl()));
  ASSERT_EQ(read.error, "");
  ASSERT_GE(read.forms.size(), 2u);
  EXPECT_EQ(read.forms[0].head(), "version");
  ASSERT_EQ(read.forms[1].head(), "deny");
  EXPECT_TRUE(read.forms[1].children[1].is_symbol("default"));
  for (const SbplNode& form : read.forms) {
    ASSERT_TRUE(form.head() == "version" || form.head() == "allow" || form.head() == "deny");
    if (form.head() != "allow") continue;
    for (size_t i = 1; i < form.children.size(); ++i) {
      const SbplNode& op = form.children[i];
      if (op.kind != SbplNode::Kind::kSymbol) continue;
      EXPECT_NE(op.text, "default");
      EXPECT_FALSE(op.text.starts_with("network")) << "base policy must not allow " << op.text;
      EXPECT_NE(op.text, "system-socket");
      // File access in the base is limited to devices, each rule with a filter.
      if (op.text.starts_with("file-")) {
        EXPECT_GT(form.children.size(), i + 1) << "unfiltered " << op.text;
      }
    }
  }
  EXPECT_TRUE(referenced_params(read.forms).empty()) << "the base policy takes no parameters";
}

TEST(SeatbeltBasePolicy, KeepsTheRulesToolchainsNeed) {
  std::string base(base_policy_sbpl());
  for (const char* rule : {
           "(allow process-fork)",
           "(allow process-exec)",
           "(allow signal (target same-sandbox))",
           "(allow process-info* (target same-sandbox))",
           "(allow process-exec (path \"/bin/ps\") (with no-sandbox))",
           "(allow pseudo-tty)",
           "(allow file-read* file-write* file-ioctl (literal \"/dev/ptmx\"))",
           "(allow sysctl-write (sysctl-name \"kern.grade_cputype\"))",
           "(allow ipc-posix-sem)",
           "(allow user-preference-read)",
           "(sysctl-name-prefix \"kern.proc.pid.\")",
           "(global-name \"com.apple.system.opendirectoryd.libinfo\")",
       }) {
    EXPECT_NE(base.find(rule), std::string::npos) << rule;
  }
}

TEST(SeatbeltBasePolicy, NetworkExtrasParseAndAllowNoConnectionsThemselves) {
  SbplReadResult read = read_sbpl(std::string(network_policy_sbpl()));
  ASSERT_EQ(read.error, "");
  for (const SbplNode& form : read.forms) {
    EXPECT_EQ(form.head(), "allow");
    EXPECT_FALSE(form.children[1].text.starts_with("network")) << "outbound/inbound come from the generator";
  }
}

TEST(SbplReader, RejectsMalformedText) {
  EXPECT_NE(read_sbpl("(allow file-read*").error, "");
  EXPECT_NE(read_sbpl("(allow file-read*))").error, "");
  EXPECT_NE(read_sbpl("(allow (literal \"/a))").error, "");
  EXPECT_NE(read_sbpl("allow").error, "");
  SbplReadResult ok = read_sbpl("; c\n(allow x (regex #\"^/a\\\"b\") (param \"P\")) ; tail\n");
  ASSERT_EQ(ok.error, "");
  EXPECT_EQ(referenced_params(ok.forms), std::vector<std::string>{"P"});
}

}  // namespace
}  // namespace codexd::sandbox::macos_backend::testing
