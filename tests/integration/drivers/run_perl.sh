#!/usr/bin/env bash
# Runs drivers/perl/prepared.pl (DBD::mysql, mysql_server_prepare=1) through the proxy.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec /usr/bin/perl "$HERE/perl/prepared.pl"
