// codexd-shim SESSION_DIR, started by codexd with its control socket as descriptor 3.
#include <cstdio>
#include <string>

#include "daemon/shim/shim.h"

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] != '/') {
    std::fprintf(stderr, "usage: codexd-shim SESSION_DIR (started by codexd, not by hand)\n");
    return 2;
  }
  return codexd::shim::run_shim({argv[1], 3});
}
