#!/usr/bin/python3
"""The binlog reader and the catch-up of online moves against a real mariadbd
(issue #17): proxy/binlog_stream decodes db0's binlog, proxy/move_catchup
applies it. Driven through tests/integration/binlog_probe.

  binlog_test.py PROBE   (ports from SP_DB0_PORT / SP_DB1_PORT, else 3307/3308)

- every column type: rows written on db0 are decoded from the binlog, and
  their literals, applied to an empty copy of the table, give a copy that is
  identical to the source (CHECKSUM TABLE and every value);
- catch-up: a snapshot copy of the keys conv_id % 4 = 1 on db1, then writes
  on db0 while the applier follows the binlog; at the end the target holds
  exactly the source's matching rows, and rows of other keys in the target
  are untouched; replaying the same binlog range again changes nothing;
- a dump from a file that does not exist fails with the server's error.
"""
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import pymysql

PROBE = sys.argv.pop(1) if len(sys.argv) > 1 else None
DB0 = int(os.environ.get("SP_DB0_PORT", "3307"))
DB1 = int(os.environ.get("SP_DB1_PORT", "3308"))
REPL = ("proxy_repl", "proxy_repl_pw")
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BACKEND = ("proxy", "proxy_pw")


def connect(port, user=BACKEND[0], password=BACKEND[1], database="im", **kwargs):
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=password, database=database,
                           charset="utf8mb4", autocommit=True, binary_prefix=True, **kwargs)


def end_position(port):
    with connect(port, *REPL, database=None) as c, c.cursor() as cur:
        cur.execute("SHOW BINLOG STATUS")
        row = cur.fetchone()
        return "%s:%d" % (row[0], row[1])


def probe(*args, check=True, timeout=120):
    r = subprocess.run([PROBE, *args], capture_output=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError("binlog_probe %s failed (%d): %s" % (args[0], r.returncode, r.stderr.decode(errors="replace")))
    return r


def dump_events(start, end):
    """The rows events of db0's binlog between two positions: (kind, table, columns, images)."""
    out = probe("dump", "--port", str(DB0), "--user", REPL[0], "--password", REPL[1], "--from", start, "--until", end)
    events = []
    for line in out.stdout.decode("utf-8").splitlines():
        fields = line.split("\t")
        if fields[0] == "ROWS":
            events.append({"kind": fields[1], "table": fields[2] + "." + fields[3], "cols": None, "images": []})
        elif fields[0] == "COLS":
            events[-1]["cols"] = fields[1:]
        elif fields[0] == "IMG":
            events[-1]["images"].append(fields[1:])
    return events


TYPES_DDL = """(
  id INT NOT NULL PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED,
  mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  f FLOAT, d DOUBLE, dec_wide DECIMAL(65,30), dec_int DECIMAL(10,0), dec_frac DECIMAL(5,4), dec_mid DECIMAL(19,9),
  vc VARCHAR(300) CHARACTER SET utf8mb4, vcl VARCHAR(50) CHARACTER SET latin1, ch CHAR(10),
  ch_wide CHAR(255) CHARACTER SET utf8mb4, bin BINARY(8), vb VARBINARY(100),
  tt TINYTEXT, tx TEXT, mt MEDIUMTEXT, lt LONGTEXT, bl BLOB, lb LONGBLOB, js JSON,
  e ENUM('a','b','c'), st SET('x','y','z'),
  dt DATE, t0 TIME, t1 TIME(1), t3 TIME(3), t6 TIME(6),
  dt0 DATETIME, dt2 DATETIME(2), dt6 DATETIME(6),
  ts0 TIMESTAMP NULL, ts4 TIMESTAMP(4) NULL, ts6 TIMESTAMP(6) NULL,
  y YEAR, b1 BIT(1), b10 BIT(10), b64 BIT(64)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"""

BINARY_BYTES = bytes([0, 0x27, 0x5c, 0x22, 0xff, 0x80, 0x0a, 0x20])
ROWS = [
    # minimums and negatives, negative times with fractions
    "(1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0,"
    " -3.4028234e38, -1.7976931348623157e308, -99999999999999999999999999999999999.999999999999999999999999999999,"
    " -9999999999, -9.9999, -1234567890.123456789,"
    " '', '', '', '', X'', X'', '', '', '', '', X'', X'', '[]', 'a', '',"
    " '1000-01-01', '-838:59:59', '-00:00:00.5', '-12:34:56.789', '-838:59:58.999999',"
    " '1000-01-01 00:00:00', '1000-01-01 00:00:00.01', '1000-01-01 00:00:00.000001',"
    " '1970-01-01 00:00:01', '1970-01-01 00:00:01.0001', '1970-01-01 00:00:01.000001',"
    " 1901, 0, 0, 0)",
    # maximums, unsigned maximums, multibyte text, binary bytes
    "(2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807,"
    " 18446744073709551615, 3.4028234e38, 1.7976931348623157e308,"
    " 99999999999999999999999999999999999.999999999999999999999999999999, 9999999999, 9.9999,"
    " 1234567890.123456789,"
    " CONCAT(REPEAT('é', 100), '漢字🙂'), 'café ', 'ab  ', REPEAT('ü', 255), %(bin)s, %(bin)s,"
    " '🙂🙂', REPEAT('t', 1000), REPEAT('m', 70000), REPEAT('l', 300000), %(bin)s, REPEAT(%(bin)s, 5000),"
    " '{\"k\": [1, 2.5, \"x\"], \"u\": \"\\\\u00e9\"}', 'c', 'x,z',"
    " '9999-12-31', '838:59:59', '00:00:00.9', '23:59:59.999', '838:59:58.999999',"
    " '9999-12-31 23:59:59', '9999-12-31 23:59:59.99', '9999-12-31 23:59:59.999999',"
    " '2038-01-19 03:14:07', '2038-01-19 03:14:07.9999', '2038-01-19 03:14:07.999999',"
    " 2155, 1, 1023, 18446744073709551615)",
    # ordinary values: fractions that are not round in binary, small numbers
    "(3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.1, 0.1, 0.000000000000000000000000000001, 0, 0.0001, -0.000000001,"
    " 'x', 'y', 'z', 'w', X'01', X'02', 't', 't', 't', 't', X'03', X'04', '{}', 'b', 'y',"
    " '2024-02-29', '00:00:00', '00:00:00.1', '-00:00:00.001', '-00:00:00.000001',"
    " '2024-02-29 13:01:02', '2024-02-29 13:01:02.5', '2024-02-29 13:01:02.123456',"
    " '2024-03-31 01:30:00', '2024-10-27 02:30:00.5', '2024-02-29 23:59:59.000001',"
    " 2024, 1, 512, 9223372036854775808)",
]


class BinlogTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not PROBE or not os.access(PROBE, os.X_OK):
            raise RuntimeError("usage: binlog_test.py PATH_TO_binlog_probe")

    def test_every_type_round_trips_through_its_literal(self):
        with connect(DB0) as c, c.cursor() as cur:
            cur.execute("SET time_zone = '+00:00'")
            for t in ("bl_types", "bl_types_copy"):
                cur.execute("DROP TABLE IF EXISTS " + t)
                cur.execute("CREATE TABLE %s %s" % (t, TYPES_DDL))
            start = end_position(DB0)
            for values in ROWS:
                cur.execute("INSERT INTO bl_types VALUES " + values, {"bin": BINARY_BYTES})
            cur.execute("INSERT INTO bl_types (id) VALUES (4)")  # NULL in every other column
            cur.execute("BEGIN")
            cur.execute("UPDATE bl_types SET ti = ti DIV 2, vc = CONCAT(vc, 'ä'), t3 = '-01:02:03.4', ts6 = NULL, b10 = 5 WHERE id IN (1, 2)")
            cur.execute("UPDATE bl_types SET id = 30, js = JSON_ARRAY(id, 'moved') WHERE id = 3")
            cur.execute("UPDATE bl_types SET f = 1.5, tx = 'filled', dt6 = '2000-01-01 00:00:00.5' WHERE id = 4")
            cur.execute("COMMIT")
            cur.execute("INSERT INTO bl_types (id, vc) VALUES (5, 'gone'), (6, 'gone too')")
            cur.execute("DELETE FROM bl_types WHERE id IN (5, 6)")
            end = end_position(DB0)

            events = [e for e in dump_events(start, end) if e["table"] == "im.bl_types"]
            kinds = [e["kind"] for e in events]
            self.assertEqual(kinds.count("insert"), 5, kinds)  # 3 + NULL row + (5, 6)
            self.assertIn("update", kinds)
            self.assertIn("delete", kinds)
            cols = events[0]["cols"]
            self.assertEqual(cols[:3], ["id", "ti", "tiu"])
            first = dict(zip(cols, events[0]["images"][0]))
            # A few decoded values, as the literals the catch-up writes.
            self.assertEqual(first["bi"], "-9223372036854775808")
            self.assertEqual(first["t1"], "'-00:00:00.5'")
            self.assertEqual(first["t6"], "'-838:59:58.999999'")
            self.assertEqual(first["dec_frac"], "-9.9999")
            second = dict(zip(cols, events[1]["images"][0]))
            self.assertEqual(second["biu"], "18446744073709551615")
            self.assertEqual(second["b64"], "18446744073709551615")
            self.assertEqual(second["bin"], "X'" + BINARY_BYTES.hex().upper() + "'")
            self.assertEqual(second["ts4"], "'2038-01-19 03:14:07.9999'")
            self.assertEqual(second["dec_wide"], "99999999999999999999999999999999999.999999999999999999999999999999")
            null_row = dict(zip(cols, events[3]["images"][0]))
            self.assertEqual({v for k, v in null_row.items() if k != "id"}, {"NULL"})

            for e in events:
                col_list = ", ".join("`%s`" % n for n in e["cols"])
                images = e["images"]
                if e["kind"] == "insert":
                    for img in images:
                        cur.execute("INSERT INTO bl_types_copy (%s) VALUES (%s)" % (col_list, ", ".join(img)))
                elif e["kind"] == "delete":
                    for img in images:
                        cur.execute("DELETE FROM bl_types_copy WHERE id = %s" % img[0])
                else:
                    for before, after in zip(images[0::2], images[1::2]):
                        sets = ", ".join("`%s` = %s" % (n, v) for n, v in zip(e["cols"], after))
                        cur.execute("UPDATE bl_types_copy SET %s WHERE id = %s" % (sets, before[0]))
                        self.assertEqual(cur.rowcount, 1, "update of id %s" % before[0])

            cur.execute("CHECKSUM TABLE bl_types, bl_types_copy")
            sums = [row[1] for row in cur.fetchall()]
            cur.execute("SELECT * FROM bl_types ORDER BY id")
            source = cur.fetchall()
            cur.execute("SELECT * FROM bl_types_copy ORDER BY id")
            copy = cur.fetchall()
            self.assertEqual([r[0] for r in source], [1, 2, 4, 30])
            for a, b in zip(source, copy):
                self.assertEqual(a, b)
            self.assertEqual(len(source), len(copy))
            self.assertEqual(sums[0], sums[1])

    def test_catchup_follows_writes_for_matching_keys_only(self):
        ddl = ("(conv_id BIGINT NOT NULL, id BIGINT NOT NULL, body VARCHAR(100), n INT, ts TIMESTAMP(3) NULL,"
               " PRIMARY KEY (conv_id, id)) ENGINE=InnoDB")
        rng = random.Random(17)
        with connect(DB0) as src, connect(DB1) as dst, src.cursor() as s, dst.cursor() as d:
            s.execute("DROP TABLE IF EXISTS bl_src")
            s.execute("CREATE TABLE bl_src " + ddl)
            d.execute("DROP TABLE IF EXISTS bl_dst")
            d.execute("CREATE TABLE bl_dst " + ddl)
            for conv in range(1, 41):
                s.executemany("INSERT INTO bl_src VALUES (%s, %s, %s, %s, NOW(3))",
                              [(conv, k, "m%d-%d" % (conv, k), k) for k in range(5)])
            # Rows of keys the move does not own, already in the target: the
            # catch-up must leave them alone (the source has other rows there).
            d.executemany("INSERT INTO bl_dst VALUES (%s, %s, 'sentinel', 0, NULL)", [(2, 0), (3, 1), (6, 99)])

            # Snapshot copy: the matching rows as of a binlog position.
            s.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            s.execute("SHOW STATUS LIKE 'binlog_snapshot_%'")
            status = dict(s.fetchall())
            snapshot = "%s:%s" % (status["Binlog_snapshot_file"], status["Binlog_snapshot_position"])
            # Written after the snapshot: must come through the catch-up.
            with connect(DB0) as other, other.cursor() as o:
                o.execute("INSERT INTO bl_src VALUES (1, 100, 'after snapshot', 1, NULL)")
            s.execute("SELECT * FROM bl_src WHERE conv_id % 4 = 1")
            copied = s.fetchall()
            s.execute("COMMIT")
            self.assertFalse(any(r[1] == 100 for r in copied))
            d.executemany("INSERT INTO bl_dst VALUES (%s, %s, %s, %s, %s)", copied)

            stop_file = os.path.join(tempfile.mkdtemp(prefix="binlog_test"), "stop")
            common = ["--port", str(DB0), "--user", REPL[0], "--password", REPL[1], "--from", snapshot,
                      "--schema", "im", "--table", "bl_src", "--key", "conv_id", "--mod", "4", "--in", "1",
                      "--target-port", str(DB1), "--target-user", BACKEND[0], "--target-password", BACKEND[1],
                      "--target-table", "`im`.`bl_dst`"]
            follower = subprocess.Popen([PROBE, "catchup", *common, "--stop-file", stop_file,
                                         "--pk-user", BACKEND[0], "--pk-password", BACKEND[1]],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            def write(sql, args):
                try:
                    s.execute(sql, args)
                except pymysql.err.IntegrityError:
                    pass  # the new key is taken: nothing written

            try:
                next_id = 1000
                deadline = time.time() + 4
                ops = 0
                while time.time() < deadline:
                    conv = rng.randint(1, 40)
                    op = rng.random()
                    if op < 0.3:
                        write("INSERT INTO bl_src VALUES (%s, %s, %s, %s, NOW(3))", (conv, next_id, "new", ops))
                        next_id += 1
                    elif op < 0.5:
                        s.execute("UPDATE bl_src SET body = CONCAT(body, '+'), n = n + 1 WHERE conv_id = %s", (conv,))
                    elif op < 0.6:  # the row moves to another key (in or out of the move)
                        write("UPDATE bl_src SET conv_id = %s WHERE conv_id = %s ORDER BY id LIMIT 1",
                              (rng.randint(1, 40), conv))
                    elif op < 0.7:  # primary key change within the key
                        write("UPDATE bl_src SET id = id + 5000 WHERE conv_id = %s AND id < 5000 ORDER BY id LIMIT 1",
                              (conv,))
                    elif op < 0.8:
                        write("DELETE FROM bl_src WHERE conv_id = %s LIMIT 2", (conv,))
                    elif op < 0.9:  # a transaction over several keys
                        s.execute("BEGIN")
                        for k in range(3):
                            write("INSERT INTO bl_src VALUES (%s, %s, 'txn', %s, NULL)", (conv + k, next_id, k))
                            next_id += 1
                        s.execute("UPDATE bl_src SET n = -n WHERE conv_id IN (%s, %s)", (conv, conv + 4))
                        s.execute("COMMIT")
                    else:  # rolled back: never in the binlog
                        s.execute("BEGIN")
                        s.execute("DELETE FROM bl_src WHERE conv_id = %s", (conv,))
                        s.execute("ROLLBACK")
                    ops += 1
                end = end_position(DB0)
                with open(stop_file + ".tmp", "w") as f:
                    f.write(end + "\n")
                os.rename(stop_file + ".tmp", stop_file)
                out, err = follower.communicate(timeout=120)
            finally:
                if follower.poll() is None:
                    follower.kill()
            self.assertEqual(follower.returncode, 0, err.decode(errors="replace"))
            fields = out.decode().split("\t")
            self.assertGreater(int(fields[2]), 0, out)  # rows applied

            def matching():
                s.execute("SELECT * FROM bl_src WHERE conv_id % 4 = 1 ORDER BY conv_id, id")
                return s.fetchall()

            def target(where):
                d.execute("SELECT * FROM bl_dst WHERE %s ORDER BY conv_id, id" % where)
                return d.fetchall()

            expected = matching()
            self.assertGreater(len(expected), 50)
            self.assertEqual(target("conv_id % 4 = 1"), expected)
            sentinels = target("conv_id % 4 <> 1")
            self.assertEqual([(r[0], r[1], r[2]) for r in sentinels], [(2, 0, "sentinel"), (3, 1, "sentinel"), (6, 99, "sentinel")])

            # Replaying the same range (from the snapshot again) is idempotent.
            again = probe("catchup", *common, "--until", end)
            self.assertGreater(int(again.stdout.decode().split("\t")[2]), 0)
            self.assertEqual(target("conv_id % 4 = 1"), expected)
            self.assertEqual(len(target("conv_id % 4 <> 1")), 3)

    def test_dump_over_tls(self):
        # The reader logs in as the pool does, TLS included (scripts/cluster up --tls).
        ca = os.path.join(os.environ.get("SP_CLUSTER_DIR", os.path.join(REPO, ".cluster")), "tls", "ca.pem")
        self.assertTrue(os.path.exists(ca), "no test CA at %s: scripts/cluster up --tls" % ca)
        with connect(DB0) as c, c.cursor() as cur:
            cur.execute("CREATE TABLE IF NOT EXISTS bl_tls (id INT PRIMARY KEY, v VARCHAR(10))")
            start = end_position(DB0)
            cur.execute("DELETE FROM bl_tls")
            cur.execute("INSERT INTO bl_tls VALUES (1, 'secret')")
            end = end_position(DB0)
        out = probe("dump", "--port", str(DB0), "--user", REPL[0], "--password", REPL[1], "--from", start,
                    "--until", end, "--tls-ca", ca).stdout.decode()
        self.assertIn("IMG\t1\tX'736563726574'", out)
        # TLS really is in use: a CA that did not sign the server's certificate fails the login.
        wrong = probe("dump", "--port", str(DB0), "--user", REPL[0], "--password", REPL[1], "--from", start,
                      "--until", end, "--tls-ca", os.path.join(os.path.dirname(ca), "proxy.pem"), check=False)
        self.assertEqual(wrong.returncode, 1)
        self.assertIn("certificate", wrong.stderr.decode())
        # The server's dump thread ends with the stream (it notices at its next
        # heartbeat, one second at most).
        deadline = time.time() + 10
        with connect(DB0, *REPL, database=None) as c, c.cursor() as cur:
            while True:
                cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'proxy_repl' "
                            "AND COMMAND LIKE 'Binlog Dump%'")
                if cur.fetchone()[0] == 0 or time.time() > deadline:
                    break
                time.sleep(0.2)
            cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'proxy_repl' "
                        "AND COMMAND LIKE 'Binlog Dump%'")
            self.assertEqual(cur.fetchone()[0], 0, "a dump thread outlived its stream")

    def test_dump_from_a_missing_file_fails_with_the_server_error(self):
        r = probe("dump", "--port", str(DB0), "--user", REPL[0], "--password", REPL[1],
                  "--from", "no-such-bin.000001:4", "--until", "no-such-bin.000001:5", check=False, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertIn("1236", r.stderr.decode())

    def test_replication_account_cannot_read_rows(self):
        # Least privilege: the binlog account sees no table.
        with pymysql.connect(host="127.0.0.1", port=DB0, user=REPL[0], password=REPL[1]) as c, c.cursor() as cur:
            with self.assertRaises(pymysql.err.OperationalError) as caught:
                cur.execute("SELECT * FROM im.bl_src")
            self.assertEqual(caught.exception.args[0], 1142)


if __name__ == "__main__":
    unittest.main(verbosity=2)
