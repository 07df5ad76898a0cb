#!/usr/bin/env bash
# Runs drivers/php/prepared.php (PDO, native prepares) through the proxy.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v php >/dev/null || { echo "php missing (scripts/install-deps.sh installs php-cli php-mysql)" >&2; exit 1; }
exec php "$HERE/php/prepared.php"
