#!/usr/bin/python3
"""Captures the binlog events of a fixed script from a real MariaDB
(scripts/cluster, binlog on) and prints tests/unit/protocol/captured_binlog.inc.
Not run by the tests:

  scripts/cluster up --ports 3430
  cmake --build build --target binlog_probe
  /usr/bin/python3 tests/unit/protocol/capture/binlog_capture.py 3430 build/tests/integration/binlog_probe \
      > tests/unit/protocol/captured_binlog.inc

The dump starts at the beginning of a fresh binlog file (FLUSH BINARY LOGS),
so the capture holds the server's fake ROTATE, FORMAT_DESCRIPTION,
GTID_LIST and BINLOG_CHECKPOINT too. Header timestamps, GTID sequence numbers
and table ids change from run to run; the tests do not depend on them.
"""
import subprocess
import sys

import pymysql

PORT = int(sys.argv[1])
PROBE = sys.argv[2]

SCRIPT = [
    "DROP TABLE IF EXISTS im.cap_bl",
    "CREATE TABLE im.cap_bl (id INT NOT NULL PRIMARY KEY, u INT UNSIGNED, big BIGINT, s VARCHAR(20),"
    " d DECIMAL(10,3), t TIME(3), dt DATETIME(6), ts TIMESTAMP(2) NULL, e ENUM('x','y'), st SET('a','b','c'),"
    " f FLOAT, db DOUBLE, bt BIT(10), y YEAR, dte DATE, bl BLOB, ch CHAR(5)) DEFAULT CHARSET=utf8mb4",
    "INSERT INTO im.cap_bl VALUES (1, 4294967295, -5, 'h\u00e9llo', -12.345, '-01:02:03.5',"
    " '2024-02-29 13:01:02.123456', '2024-01-01 00:00:00.25', 'y', 'a,c', 0.5, -2.25, b'1010101010', 2024,"
    " '2024-02-29', X'00275c', 'ab')",
    "INSERT INTO im.cap_bl (id) VALUES (2)",
    "UPDATE im.cap_bl SET big = 7, id = 3 WHERE id = 1",
    "DELETE FROM im.cap_bl WHERE id = 2",
]


def main():
    root = pymysql.connect(host="127.0.0.1", port=PORT, user="root", password="root_pw", autocommit=True)
    cur = root.cursor()
    cur.execute("SET time_zone = '+00:00'")
    cur.execute("FLUSH BINARY LOGS")
    cur.execute("SHOW BINLOG STATUS")
    file, _ = cur.fetchone()[:2]
    for sql in SCRIPT:
        cur.execute(sql)
    cur.execute("SHOW BINLOG STATUS")
    end = "%s:%d" % cur.fetchone()[:2]
    version = cur.connection.get_server_info()
    out = subprocess.run([PROBE, "dump", "--port", str(PORT), "--user", "proxy_repl", "--password", "proxy_repl_pw",
                          "--from", file + ":4", "--until", end, "--raw", "--quiet"],
                         check=True, capture_output=True, text=True).stdout
    events = [line.split("\t")[1:] for line in out.splitlines() if line.startswith("RAW")]
    print("// Binlog events captured from a real MariaDB %s (scripts/cluster: binlog_format=ROW," % version)
    print("// binlog_row_image=FULL, binlog_row_metadata=FULL, binlog_checksum=CRC32) by")
    print("// tests/unit/protocol/capture/binlog_capture.py: a COM_BINLOG_DUMP from %s:4 after" % file)
    for sql in SCRIPT:
        print("//   " + sql.encode("ascii", "backslashreplace").decode())
    print("// Each entry is one event as the dump sends it (without the packet's 0x00).")
    print("#pragma once\n\nnamespace sp::protocol::test {\n")
    print("struct CapturedBinlogEvent {\n  int type;\n  const char* hex;\n};\n")
    print('inline constexpr const char* kCapturedBinlogFile = "%s";\n' % file)
    print("inline const CapturedBinlogEvent kCapturedBinlog[] = {")
    for n, (etype, hexdata) in enumerate(events):
        chunks = [hexdata[i:i + 96] for i in range(0, len(hexdata), 96)]
        body = "\"\n         \"".join(chunks)
        print('    /* %2d */ {%s, "%s"},' % (n, etype, body))
    print("};\n\n}  // namespace sp::protocol::test")


main()
