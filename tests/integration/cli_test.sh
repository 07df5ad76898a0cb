#!/usr/bin/env bash
# The mariadb command-line client through the proxy: -e batches, scripts on
# stdin, client commands (USE, status), errors with their SQLSTATE.
# (The interactive client without -A, which sends COM_FIELD_LIST, is in
# pyit/test_cli_interactive.py: it needs a terminal.)
set -uo pipefail

PORT="${SP_PROXY_PORT:-16033}"
HOST="${SP_PROXY_HOST:-127.0.0.1}"
TABLE="it_cli_$$_$RANDOM"
CLIENT=(mariadb --no-defaults -h"$HOST" -P"$PORT" --connect-timeout=10 --default-character-set=utf8mb4)
APP=("${CLIENT[@]}" -uapp -papp_pw)
passed=0
failed=0

# check NAME EXPECTED ACTUAL
check() {
  if [[ "$2" == "$3" ]]; then
    passed=$((passed + 1)); echo "ok   - $1"
  else
    failed=$((failed + 1)); echo "FAIL - $1"
    echo "  expected: $(printf '%q' "$2")"; echo "  actual:   $(printf '%q' "$3")"
  fi
}
# check_contains NAME NEEDLE HAYSTACK
check_contains() {
  if [[ "$3" == *"$2"* ]]; then
    passed=$((passed + 1)); echo "ok   - $1"
  else
    failed=$((failed + 1)); echo "FAIL - $1"
    echo "  expected to contain: $2"; echo "  actual: $3"
  fi
}

out=$("${APP[@]}" -A -N -B im -e "SELECT 1+1" 2>&1)
check "single -e statement" "2" "$out"

out=$("${APP[@]}" -N -B im -e "SELECT 1+1" 2>&1)
check "same without -A" "2" "$out"

out=$("${APP[@]}" -A -N -B im -e "
  CREATE TABLE $TABLE (id INT PRIMARY KEY, name VARCHAR(20), note VARCHAR(20));
  INSERT INTO $TABLE VALUES (1, 'one', NULL), (2, 'two', 'x');
  UPDATE $TABLE SET note = 'y' WHERE id = 1;
  SELECT id, name, note FROM $TABLE ORDER BY id;
  DELETE FROM $TABLE WHERE id = 2;
  SELECT COUNT(*) FROM $TABLE;" 2>&1)
check "-e batch of DDL and DML" $'1\tone\ty\n2\ttwo\tx\n1' "$out"

out=$("${APP[@]}" -A -B im 2>&1 <<SQL
INSERT INTO $TABLE VALUES (3, 'three', NULL);
SELECT id, note FROM $TABLE WHERE id = 3;
SQL
)
check "script on stdin, NULL printed" $'id\tnote\n3\tNULL' "$out"

out=$("${APP[@]}" -A -N -B im -e "USE information_schema; SELECT DATABASE(); USE im; SELECT DATABASE()" 2>&1)
check "USE switches database (COM_INIT_DB)" $'information_schema\nim' "$out"

out=$("${APP[@]}" -A -N -B im -e "SELECT '😀 ü', CHAR_LENGTH('😀 ü')" 2>&1)
check "utf8mb4 text" $'😀 ü\t3' "$out"

out=$("${APP[@]}" -A -N -B -e "SHOW DATABASES" 2>&1)
check_contains "SHOW DATABASES lists im" $'\nim\n' $'\n'"$out"$'\n'

out=$("${APP[@]}" -A im -e "status" 2>&1)
check_contains "client status command" "Current database:	im" "$out"

out=$("${APP[@]}" -A -N -B im -e "SELECT * FROM ${TABLE}_missing" 2>&1); rc=$?
check "missing table exit code" "1" "$rc"
check_contains "missing table error" "ERROR 1146 (42S02)" "$out"

out=$("${APP[@]}" -A -N -B im -e "SELECT 1; SELEC 2; SELECT 3" 2>&1); rc=$?
check "batch stops at syntax error" "1" "$rc"
check_contains "syntax error reported" "ERROR 1064 (42000)" "$out"

out=$(printf 'SELECT 1;\nSELEC 2;\nSELECT 3;\n' | "${APP[@]}" -A -N -B --force im 2>/dev/null)
check "--force script continues after an error" $'1\n3' "$out"

out=$("${CLIENT[@]}" -uapp -pwrong_pw im -e "SELECT 1" 2>&1); rc=$?
check "wrong password exit code" "1" "$rc"
check_contains "wrong password error" "ERROR 1045 (28000)" "$out"

out=$("${CLIENT[@]}" -unobody_zz -papp_pw im -e "SELECT 1" 2>&1)
check_contains "unknown user error" "ERROR 1045 (28000)" "$out"

"${APP[@]}" -A im -e "DROP TABLE IF EXISTS $TABLE" >/dev/null 2>&1
echo "cli: $passed passed, $failed failed"
(( failed == 0 ))
