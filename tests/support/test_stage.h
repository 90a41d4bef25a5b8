// The programs the tests start as other uids (nobody, created users) or inside sandboxes:
// codexd, codexctl, codexd-shim, codexd-sandbox-helper, sandbox_probe, codexd_system_rpc. They
// run from copies outside the build tree, made by the CTest fixture test_stage.setup
// (cmake/TestStage.cmake), so that the build tree may sit under /tmp (a writable root of the
// sandbox, where codexd refuses to run its helper) or where other users cannot reach it.
#pragma once

#include <string>

namespace codexd::testing {

// The staged copy of `name`. When it is not there (a test binary started by hand before the
// fixture ran) says once on stderr how to make the stage; the caller's exec then fails.
std::string staged_program(const std::string& name);

}  // namespace codexd::testing
