// The system tests' main: users and groups are created on first use and always removed here.
#include <gtest/gtest.h>

#include "tests/system/system_env.h"

namespace {

class SystemEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { codexd::testing::tear_down_system_env(); }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new SystemEnvironment);
  return RUN_ALL_TESTS();
}
