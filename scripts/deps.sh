#!/usr/bin/env bash
# Installs every Debian 12 package codexd needs to build, test and package. Idempotent.
set -euo pipefail

PACKAGES=(
  # toolchain
  cmake ninja-build g++ pkg-config clang libclang-rt-14-dev python3
  # libraries (all from Debian 12)
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc  # RPC
  libboost-dev            # Asio (header-only)
  libseccomp-dev          # the sandbox helper's syscall filter
  libspdlog-dev libfmt-dev  # structured logs
  libgtest-dev libgmock-dev libbenchmark-dev  # tests and benches
  libcli11-dev nlohmann-json3-dev libtomlplusplus-dev  # CLI, JSON, config
  libsystemd-dev          # sd_notify, socket activation, journald
  libicu-dev              # Unicode caseless matching (canonical_matching rules)
  libssl-dev              # HMAC-SHA256 of call ids in the audit log
  libcap-dev
  # runtime and test tools
  bubblewrap              # the Linux sandbox
  dpkg-dev systemd shellcheck util-linux passwd procps iproute2 file
  logrotate               # the package smoke test checks /etc/logrotate.d/codexd with it
  lintian                 # the .deb must pass it (packaging/lintian_check.sh)
  python3-seccomp         # the smoke test runs the daemon under the unit's syscall filter
  gdb                     # a test daemon that hangs at stop has its threads' backtraces printed
  groff-base              # the man-page test renders each page with groff
  tmux                    # the approvals view's test drives it in tmux (send-keys, capture-pane)
  zsh fish                # codexctl's completion scripts are tested in their shells
  curl git python3-pip    # the network proxy tests drive real curl, git and Debian's pip
  python3-grpcio python3-protobuf  # the Python client package (clients/python) and its tests
  python3-prometheus-client  # the metrics test parses each scrape with the reference parser
)

# The Node client package (clients/node) is built and tested with node and npm. Install
# Debian's only when there is none: a machine with NodeSource's nodejs (which bundles npm)
# cannot take Debian's npm beside it.
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
