"""Big values and big results through the proxy: multi-megabyte rows, rows that
cross the 16 MiB protocol packet boundary, and a 20 MB result read fully."""
import hashlib
import os
import unittest

import pymysql.cursors

from . import sptest

MIB = 1 << 20


class LargeData(unittest.TestCase):
    def setUp(self):
        self.conn = sptest.proxy(read_timeout=120, write_timeout=120)
        self.db0 = sptest.direct(sptest.DB0_PORT)
        self.table = sptest.unique_name("it_big")

    def tearDown(self):
        sptest.query(self.db0, f"DROP TABLE IF EXISTS {self.table}")
        self.conn.close()
        self.db0.close()

    def test_backend_allows_large_packets(self):
        self.assertGreaterEqual(sptest.scalar(self.conn, "SELECT @@max_allowed_packet"), 64 * MIB)

    def test_8mb_longblob_round_trip(self):
        sptest.query(self.conn, f"CREATE TABLE {self.table} (id INT PRIMARY KEY, v LONGBLOB)")
        value = os.urandom(8 * MIB)
        sptest.query(self.conn, f"INSERT INTO {self.table} VALUES (1, %s)", (value,))
        # The server holds exactly these bytes...
        self.assertEqual(sptest.scalar(self.db0, f"SELECT SHA2(v, 256) FROM {self.table}"),
                         hashlib.sha256(value).hexdigest())
        # ...and the proxy returns them unchanged.
        self.assertEqual(sptest.scalar(self.conn, f"SELECT v FROM {self.table} WHERE id = 1"), value)

    def test_values_crossing_the_16mb_packet_boundary(self):
        # A packet payload of 0xFFFFFF bytes or more is split into several packets;
        # both directions must reassemble. Values just around the boundary, plus one well past it.
        sptest.query(self.conn, f"CREATE TABLE {self.table} (id INT PRIMARY KEY, v LONGBLOB)")
        for n, size in enumerate((0xFFFFFF - 30, 0xFFFFFF, 17 * MIB)):
            with self.subTest(size=size):
                value = bytes([n + 65]) * size  # no bytes that need escaping: exact query length
                sptest.query(self.conn, f"INSERT INTO {self.table} VALUES ({n}, %s)", (value,))
                self.assertEqual(sptest.scalar(self.db0, f"SELECT LENGTH(v) FROM {self.table} WHERE id = {n}"),
                                 size)
                self.assertEqual(sptest.scalar(self.conn, f"SELECT v FROM {self.table} WHERE id = {n}"),
                                 value)
        generated = sptest.scalar(self.conn, f"SELECT REPEAT('z', {17 * MIB})")
        self.assertEqual(len(generated), 17 * MIB)
        self.assertEqual(generated, "z" * (17 * MIB))

    def test_20mb_result_read_fully(self):
        rows, width = 20480, 1024  # 20 MiB of payload
        sptest.query(self.conn, f"CREATE TABLE {self.table} (id INT PRIMARY KEY, v VARCHAR({width}))")
        sptest.query(self.conn, f"INSERT INTO {self.table} SELECT seq, REPEAT(CHAR(65 + seq % 26), {width})"
                                f" FROM seq_1_to_{rows}")
        expected = [(i, chr(65 + i % 26) * width) for i in range(1, rows + 1)]
        with self.conn.cursor() as cur:  # buffered: the whole result at once
            self.assertEqual(cur.execute(f"SELECT id, v FROM {self.table} ORDER BY id"), rows)
            self.assertEqual(list(cur.fetchall()), expected)
        with self.conn.cursor(pymysql.cursors.SSCursor) as cur:  # streamed row by row
            cur.execute(f"SELECT id, v FROM {self.table} ORDER BY id")
            count = 0
            for row, want in zip(cur, expected):
                self.assertEqual(row, want)
                count += 1
            self.assertEqual(count, rows)
        self.assertEqual(sptest.scalar(self.conn, "SELECT 1"), 1)  # stream fully drained

    def test_many_small_rows(self):
        with self.conn.cursor(pymysql.cursors.SSCursor) as cur:
            cur.execute("SELECT seq, seq * 2 FROM seq_1_to_200000")
            total = sum(a + b for a, b in cur)
        self.assertEqual(total, 3 * 200000 * 200001 // 2)


if __name__ == "__main__":
    unittest.main()
