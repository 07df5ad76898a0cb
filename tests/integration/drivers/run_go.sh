#!/usr/bin/env bash
# Builds drivers/go/<program>.go (default prepared; transactions for the
# transaction tests) offline in GOPATH mode against Debian's
# golang-github-go-sql-driver-mysql-dev (/usr/share/gocode) and runs it
# through the proxy. No network: GOPROXY=off, GOFLAGS empty, caches in a temp dir.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROGRAM="${1:-prepared}"
command -v go >/dev/null || { echo "go not installed (scripts/install-deps.sh installs golang-go)" >&2; exit 1; }
WORK="$(mktemp -d /tmp/sp-drv-go-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
export GO111MODULE=off GOPATH="/usr/share/gocode:$WORK/gopath" GOCACHE="$WORK/cache" GOPROXY=off GOFLAGS= CGO_ENABLED=0
go build -o "$WORK/$PROGRAM" "$HERE/go/$PROGRAM.go"
"$WORK/$PROGRAM"
