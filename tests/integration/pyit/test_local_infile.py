"""LOAD DATA LOCAL INFILE through the proxy (issue 30), each case compared
with the same file loaded straight into db0.

- users[].local_infile (user `loader`): the client's file reaches the server
  and loads the same rows, with the same affected-row count and warnings, as
  loaded directly; a file with bad rows gives the same warnings.
- Without it (user `app`), or when the client does not offer local files:
  4166, the server's own refusal, also for LOAD DATA /*!LOCAL*/; nothing is
  loaded and the session carries on.
- Into a sharded logical table: refused clearly (the proxy does not route a
  file's rows by key).
- A file over limits.local_infile_max_bytes (1 MiB in the test config):
  9144, nothing loaded (InnoDB), the session carries on.
- The server's own errors (a table that does not exist) as directly.
"""
import os
import tempfile
import unittest

import pymysql

from pyit import sptest

LOADER, LOADER_PW = "loader", "loader_pw"
TABLE = "it_infile"


def rows_of(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


class LocalInfile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="sp-infile-")
        with sptest.direct() as d:
            for t in (TABLE, TABLE + "_direct"):
                rows_of(d, f"DROP TABLE IF EXISTS {t}")
                rows_of(d, f"CREATE TABLE {t} (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, n INT) ENGINE=InnoDB")

    @classmethod
    def tearDownClass(cls):
        with sptest.direct() as d:
            for t in (TABLE, TABLE + "_direct"):
                rows_of(d, f"DROP TABLE IF EXISTS {t}")

    def setUp(self):
        with sptest.direct() as d:
            for t in (TABLE, TABLE + "_direct"):
                rows_of(d, f"DELETE FROM {t}")

    def file(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def load(self, conn, path, table):
        """(affected rows, warnings) of LOAD DATA LOCAL on `conn`."""
        with conn.cursor() as cur:
            affected = cur.execute(f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE {table} "
                                   "FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\n'")
            warnings = rows_of(conn, "SHOW WARNINGS")
        return affected, warnings

    def both(self, path):
        """The same file loaded through the proxy (as loader) and directly."""
        with sptest.proxy(LOADER, LOADER_PW, local_infile=True) as p, sptest.direct(local_infile=True) as d:
            via_proxy = self.load(p, path, TABLE)
            direct = self.load(d, path, TABLE + "_direct")
            tables = (rows_of(d, f"SELECT * FROM {TABLE} ORDER BY id"),
                      rows_of(d, f"SELECT * FROM {TABLE}_direct ORDER BY id"))
        return via_proxy, direct, tables

    def test_loads_the_same_rows_as_the_server(self):
        path = self.file("rows.csv", "".join(f"{i},name{i},{i * 7}\n" for i in range(1, 5001)))
        via_proxy, direct, (loaded, expected) = self.both(path)
        self.assertEqual(via_proxy, direct)
        self.assertEqual(via_proxy[0], 5000)
        self.assertEqual(len(loaded), 5000)
        self.assertEqual(loaded, expected)

    def test_bad_rows_warn_as_on_the_server(self):
        path = self.file("bad.csv", "1,a,1\n2,b,notanumber\n3\n1,dup,9\n4,d,4,extra\n")
        via_proxy, direct, (loaded, expected) = self.both(path)
        # The warnings name the table: the direct load's is TABLE + "_direct".
        direct = (direct[0], tuple((lvl, code, msg.replace(TABLE + "_direct", TABLE)) for lvl, code, msg in direct[1]))
        self.assertEqual(via_proxy, direct)
        self.assertGreater(len(via_proxy[1]), 0, "the file should give warnings")
        self.assertEqual(loaded, expected)

    def test_refused_without_users_local_infile(self):
        path = self.file("one.csv", "1,a,1\n")
        with sptest.proxy(local_infile=True) as p:  # user app
            for verb in ("LOAD DATA LOCAL INFILE", "LOAD DATA /*!LOCAL*/ INFILE"):
                with self.assertRaises(pymysql.err.MySQLError) as refused:
                    rows_of(p, f"{verb} '{path}' INTO TABLE {TABLE} FIELDS TERMINATED BY ','")
                self.assertEqual(refused.exception.args[0], 4166, refused.exception.args)
                self.assertIn("users[].local_infile", refused.exception.args[1])
            self.assertEqual(rows_of(p, "SELECT 1"), ((1,),))
        with sptest.direct() as d:
            self.assertEqual(rows_of(d, f"SELECT COUNT(*) FROM {TABLE}"), ((0,),))

    def test_refused_when_the_client_sends_no_files(self):
        path = self.file("one.csv", "1,a,1\n")
        with sptest.proxy(LOADER, LOADER_PW) as p, sptest.direct() as d:  # no CLIENT_LOCAL_FILES
            codes = []
            for conn, table in ((p, TABLE), (d, TABLE + "_direct")):
                with self.assertRaises(pymysql.err.MySQLError) as refused:
                    rows_of(conn, f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE {table} FIELDS TERMINATED BY ','")
                codes.append(refused.exception.args[0])
            self.assertEqual(codes[0], codes[1], "the proxy should answer as the server does")
            self.assertEqual(codes[0], 4166)
            self.assertEqual(rows_of(p, "SELECT 1"), ((1,),))

    def test_sharded_table_refused_clearly(self):
        path = self.file("msg.csv", "1,2,3\n")
        with sptest.proxy(LOADER, LOADER_PW, local_infile=True) as p:
            with self.assertRaises(pymysql.err.MySQLError) as refused:
                rows_of(p, f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE msg FIELDS TERMINATED BY ','")
            self.assertEqual(refused.exception.args[0], 9113, refused.exception.args)
            self.assertIn("LOAD DATA into sharded table msg", refused.exception.args[1])
            self.assertEqual(rows_of(p, "SELECT 1"), ((1,),))

    def test_file_over_the_limit_is_refused_and_nothing_loaded(self):
        line = "x" * 18
        path = self.file("big.csv", "".join(f"{i},{line},{i}\n" for i in range(1, 60001)))  # ~1.8 MiB
        self.assertGreater(os.path.getsize(path), 1048576)
        with sptest.proxy(LOADER, LOADER_PW, local_infile=True) as p:
            with self.assertRaises(pymysql.err.MySQLError) as refused:
                self.load(p, path, TABLE)
            self.assertEqual(refused.exception.args[0], 9144, refused.exception.args)
            self.assertIn("local_infile_max_bytes", refused.exception.args[1])
            self.assertEqual(rows_of(p, "SELECT 1"), ((1,),), "the session carries on")
        with sptest.direct() as d:
            self.assertEqual(rows_of(d, f"SELECT COUNT(*) FROM {TABLE}"), ((0,),))

    def test_server_errors_as_directly(self):
        path = self.file("one.csv", "1,a,1\n")
        codes = []
        with sptest.proxy(LOADER, LOADER_PW, local_infile=True) as p, sptest.direct(local_infile=True) as d:
            for conn in (p, d):
                with self.assertRaises(pymysql.err.MySQLError) as failed:
                    rows_of(conn, f"LOAD DATA LOCAL INFILE '{path}' INTO TABLE it_infile_missing")
                codes.append(failed.exception.args[0])
            self.assertEqual(codes, [1146, 1146])
            self.assertEqual(rows_of(p, "SELECT 1"), ((1,),))


if __name__ == "__main__":
    unittest.main(verbosity=2)
