// codexd-shim [SESSION_DIR], started by codexd with its control socket as descriptor 3. Without
// SESSION_DIR it was started ahead of its session, and the spawn request names the directory.
#include <cstdio>
#include <string>

#include "daemon/shim/shim.h"

int main(int argc, char** argv) {
  if (argc > 2 || (argc == 2 && argv[1][0] != '/')) {
    std::fprintf(stderr, "usage: codexd-shim [SESSION_DIR] (started by codexd, not by hand)\n");
    return 2;
  }
  return codexd::shim::run_shim({argc == 2 ? argv[1] : "", 3});
}
