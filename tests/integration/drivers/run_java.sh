#!/usr/bin/env bash
# Compiles drivers/java/<Class>.java (default PreparedIT; TransactionsIT for the
# transaction tests) against Debian's MariaDB Connector/J (libmariadb-java) and
# runs it through the proxy (useServerPrepStmts=true).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLASS="${1:-PreparedIT}"
JAR=/usr/share/java/mariadb-java-client.jar
[[ -r "$JAR" ]] || { echo "$JAR missing (scripts/install-deps.sh installs libmariadb-java)" >&2; exit 1; }
WORK="$(mktemp -d /tmp/sp-drv-java-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
javac -d "$WORK" -cp "$JAR" "$HERE/java/$CLASS.java"
java -cp "$JAR:$WORK" "$CLASS"
