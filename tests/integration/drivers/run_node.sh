#!/usr/bin/env bash
# Installs mysql2 from package-lock.json (npm ci, into a temp copy so the
# source tree stays clean) and runs drivers/node/<script>.mjs (default
# prepared; transactions for the transaction tests) through the proxy.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SCRIPT="${1:-prepared}"
command -v node >/dev/null || { echo "node not installed (scripts/install-deps.sh installs nodejs and npm)" >&2; exit 1; }
command -v npm >/dev/null || { echo "npm not installed (scripts/install-deps.sh installs nodejs and npm)" >&2; exit 1; }
WORK="$(mktemp -d /tmp/sp-drv-node-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cp "$HERE/node/package.json" "$HERE/node/package-lock.json" "$HERE/node/$SCRIPT.mjs" "$WORK/"
(cd "$WORK" && npm ci --no-audit --no-fund --loglevel=error)
node "$WORK/$SCRIPT.mjs"
