#include "tests/support/test_stage.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>

#ifndef CODEXD_TEST_STAGE_BIN_DIR
#error "CODEXD_TEST_STAGE_BIN_DIR must name the staged bin directory (cmake/TestStage.cmake)"
#endif

namespace codexd::testing {

std::string staged_program(const std::string& name) {
  std::string path = std::string(CODEXD_TEST_STAGE_BIN_DIR) + "/" + name;
  static std::atomic<bool> told{false};
  if (::access(path.c_str(), X_OK) != 0 && !told.exchange(true)) {
    std::fprintf(stderr,
                 "%s is not staged: the tests run copies of the built programs, which the CTest fixture makes "
                 "(ctest runs test_stage.setup before the tests that need it; by hand: ctest --test-dir BUILD -R "
                 "test_stage.setup)\n",
                 path.c_str());
  }
  return path;
}

}  // namespace codexd::testing
