// Runs a test body once per backend (bwrap, Landlock forced); a backend this machine cannot
// use makes the test skip with the probe's reason.
#pragma once

#include <gtest/gtest.h>

#include "tests/sandbox/sandbox_test_support.h"

namespace codexd::sandbox::testing {

class BackendTest : public ::testing::TestWithParam<TestBackend> {};

inline std::string backend_param_name(const ::testing::TestParamInfo<TestBackend>& info) {
  return backend_name(info.param);
}

}  // namespace codexd::sandbox::testing

#define CODEXD_INSTANTIATE_BOTH_BACKENDS(Suite)                                         \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite,                                             \
                           ::testing::Values(::codexd::sandbox::testing::TestBackend::kBwrap, \
                                             ::codexd::sandbox::testing::TestBackend::kLandlock), \
                           ::codexd::sandbox::testing::backend_param_name)
