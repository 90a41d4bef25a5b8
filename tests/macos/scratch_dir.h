// A temporary directory removed with everything in it at the end of a test, in $TMPDIR and
// resolved, so expectations do not depend on a symlinked temp directory.
#pragma once

#include "tests/support/temp_dir.h"

namespace codexd::sandbox::macos_backend::testing {

class ScratchDir : public codexd::testing::TempDir {
 public:
  ScratchDir() : TempDir("codexd-macos", codexd::testing::TempLocation::kSystemTemp) {}
};

}  // namespace codexd::sandbox::macos_backend::testing
