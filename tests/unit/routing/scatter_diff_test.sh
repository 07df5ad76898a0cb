#!/bin/bash
# Integration: scatter_diff (planner + ResultMerger vs one unsharded MariaDB)
# on a throwaway mariadbd (own datadir and socket, no TCP), several seeds.
#   scatter_diff_test.sh SCATTER_DIFF_BINARY [SEEDS...]
set -u
bin=$1; shift
seeds=${*:-1 2 3}
dir=$(mktemp -d /tmp/sp-scatter-diff.XXXXXX)
cleanup() {
  if [ -f "$dir/pid" ]; then kill "$(cat "$dir/pid")" 2>/dev/null; sleep 1; fi
  rm -rf "$dir"
}
trap cleanup EXIT
mariadb-install-db --no-defaults --datadir="$dir/data" --auth-root-authentication-method=normal >"$dir/install.log" 2>&1 || {
  cat "$dir/install.log"; exit 1; }
user_opt=()
[ "$(id -u)" = 0 ] && user_opt=(--user=root)
mariadbd --no-defaults "${user_opt[@]}" --datadir="$dir/data" --skip-networking --socket="$dir/sock" \
  --pid-file="$dir/pid" --skip-grant-tables >"$dir/server.log" 2>&1 &
for _ in $(seq 60); do [ -S "$dir/sock" ] && break; sleep 0.5; done
[ -S "$dir/sock" ] || { cat "$dir/server.log"; exit 1; }
status=0
for seed in $seeds; do
  "$bin" "$dir/sock" 500 "$seed" >"$dir/out" || status=1
  grep -E "^(FAIL|  |scatter_diff)" "$dir/out"
done
exit $status
