// The enum fields of requests: each enum's 0 value is <ENUM>_UNSPECIFIED (what a client that
// leaves the field unset sends) and means the documented default; a number outside the enum
// is INVALID_ARGUMENT saying which values to use.
#include <gtest/gtest.h>

#include "daemon/server/request_validation.h"

namespace codexd::server {
namespace {

using CancelMode = exec::ExecEngine::CancelMode;

TEST(SandboxPermissionsField, UnsetIsUseDefault) {
  auto unset = validate_sandbox_permissions(v1::SANDBOX_PERMISSIONS_UNSPECIFIED);
  ASSERT_TRUE(unset.ok()) << unset.status().message();
  EXPECT_FALSE(*unset);
  auto use_default = validate_sandbox_permissions(v1::USE_DEFAULT);
  ASSERT_TRUE(use_default.ok());
  EXPECT_FALSE(*use_default);
  auto escalated = validate_sandbox_permissions(v1::REQUIRE_ESCALATED);
  ASSERT_TRUE(escalated.ok());
  EXPECT_TRUE(*escalated);
}

TEST(SandboxPermissionsField, UnknownNumbersNameTheValuesToUse) {
  for (int number : {3, 7, -1}) {
    auto bad = validate_sandbox_permissions(static_cast<v1::SandboxPermissions>(number));
    ASSERT_FALSE(bad.ok()) << number;
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(bad.status().message(), "`sandbox_permissions` is " + std::to_string(number) +
                                          ", not a SandboxPermissions value: use USE_DEFAULT (1; unset means the "
                                          "same) or REQUIRE_ESCALATED (2)");
  }
}

TEST(CancelModeField, UnsetIsTerminate) {
  const std::pair<v1::CancelRequest::Mode, CancelMode> cases[] = {
      {v1::CancelRequest::MODE_UNSPECIFIED, CancelMode::kTerminate},
      {v1::CancelRequest::TERMINATE, CancelMode::kTerminate},
      {v1::CancelRequest::INTERRUPT, CancelMode::kInterrupt},
      {v1::CancelRequest::KILL, CancelMode::kKill},
  };
  for (const auto& [mode, expected] : cases) {
    auto got = validate_cancel_mode(mode);
    ASSERT_TRUE(got.ok()) << v1::CancelRequest::Mode_Name(mode);
    EXPECT_EQ(*got, expected) << v1::CancelRequest::Mode_Name(mode);
  }
}

TEST(CancelModeField, UnknownNumbersNameTheValuesToUse) {
  auto bad = validate_cancel_mode(static_cast<v1::CancelRequest::Mode>(4));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "`mode` is 4, not a CancelRequest.Mode value: use TERMINATE (1; unset means the same), INTERRUPT (2) or "
            "KILL (3)");
}

}  // namespace
}  // namespace codexd::server
