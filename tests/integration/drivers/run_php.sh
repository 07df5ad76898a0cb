#!/usr/bin/env bash
# Runs drivers/php/<script>.php (default prepared; transactions for the
# transaction tests) with PDO and native prepares through the proxy.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v php >/dev/null || { echo "php missing (scripts/install-deps.sh installs php-cli php-mysql)" >&2; exit 1; }
exec php "$HERE/php/${1:-prepared}.php"
