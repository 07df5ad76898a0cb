#!/usr/bin/env bash
# Installs the Debian 12 packages shardproxy builds and tests with. Idempotent:
# does nothing when every package is present; otherwise refreshes the package
# lists (when older than a day, or when an install fails on stale lists) and
# installs the missing ones. Never starts the system MariaDB service: the
# project runs its own servers on its own ports (scripts/cluster).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libboost1.81-dev libfmt-dev libspdlog-dev libsqlite3-dev libyaml-cpp-dev libjemalloc-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev libssl-dev libmariadb-dev
  mariadb-server mariadb-client mariadb-test sysbench
  python3 python3-pymysql python3-yaml python3-sqlalchemy procps openssl
  golang-go golang-github-go-sql-driver-mysql-dev default-jdk-headless libmariadb-java php-cli php-mysql libdbd-mysql-perl
  gnuplot-nox
  liburing-dev
  clang-16 libclang-rt-16-dev llvm-16
  prometheus
  etcd-server etcd-client
)
LISTS_MAX_AGE_S=86400
# Wait for another apt/dpkg run to finish instead of failing at once.
APT_OPTS=(-o DPkg::Lock::Timeout=600)
POLICY=/usr/sbin/policy-rc.d

log() { echo "install-deps: $*" >&2; }

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { log "not root and no sudo: cannot install packages"; exit 1; }
  SUDO=(sudo)
fi

missing_packages() {
  # One dpkg-query for all: unknown packages print nothing on stdout.
  local installed
  installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" 2>/dev/null \
              | awk '$NF == "installed" && $(NF-1) == "ok" { print $1 }' || true)
  local p
  for p in "${PACKAGES[@]}"; do
    grep -qxF "$p" <<<"$installed" || echo "$p"
  done
}

lists_are_stale() {
  local newest
  newest=$(find /var/lib/apt/lists -maxdepth 1 -type f -name '*Packages*' -printf '%T@\n' 2>/dev/null \
           | sort -n | tail -1)
  [[ -z "$newest" ]] && return 0
  (( $(date +%s) - ${newest%.*} > LISTS_MAX_AGE_S ))
}

apt_update() {
  log "apt-get update"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" update -q
}

apt_install() {
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" install -y -q --no-install-recommends "$@"
}

# Package scripts call invoke-rc.d, which asks policy-rc.d whether to start a
# service; exit 101 means "no". Add one only for the duration of the install.
deny_service_starts() {
  if [[ -e "$POLICY" ]]; then return 0; fi
  printf '#!/bin/sh\n# temporary, from shardproxy scripts/install-deps.sh\nexit 101\n' \
    | "${SUDO[@]}" tee "$POLICY" >/dev/null
  "${SUDO[@]}" chmod 755 "$POLICY"
  trap '"${SUDO[@]}" rm -f "$POLICY"' EXIT
}

# Node.js and npm for the mysql2 driver test (tests/integration/drivers/run_node.sh).
# Machines that ship their own Node.js (with its npm) keep it: Debian's npm
# package would conflict with it. Only where neither is present do Debian's come in.
ensure_node() {
  if command -v node >/dev/null && command -v npm >/dev/null; then return 0; fi
  log "node/npm missing: installing Debian's nodejs and npm"
  deny_service_starts
  if lists_are_stale; then apt_update; fi
  apt_install nodejs npm || { apt_update; apt_install nodejs npm; }
}

main() {
  local missing
  ensure_node
  mapfile -t missing < <(missing_packages)
  if (( ${#missing[@]} == 0 )); then
    log "all ${#PACKAGES[@]} packages already installed"
    return 0
  fi
  log "missing: ${missing[*]}"
  deny_service_starts
  if lists_are_stale; then apt_update; fi
  if ! apt_install "${missing[@]}"; then
    log "install failed; refreshing package lists and retrying once"
    apt_update
    apt_install "${missing[@]}"
  fi
  mapfile -t missing < <(missing_packages)
  if (( ${#missing[@]} )); then
    log "still missing after install: ${missing[*]}"
    exit 1
  fi
  log "done"
}

main "$@"
