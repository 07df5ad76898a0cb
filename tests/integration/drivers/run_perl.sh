#!/usr/bin/env bash
# Runs drivers/perl/<script>.pl (default prepared; transactions for the
# transaction tests; DBD::mysql, mysql_server_prepare=1) through the proxy.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/perl "$HERE/perl/${1:-prepared}.pl"
