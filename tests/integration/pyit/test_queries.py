"""Plain statements through the proxy to the default backend (db0, database im)."""
import datetime
import decimal
import unittest

import pymysql
from pymysql.constants import COMMAND
from pymysql.protocol import FieldDescriptorPacket

from . import sptest


class Statements(unittest.TestCase):
    def setUp(self):
        self.conn = sptest.proxy()
        self.db0 = sptest.direct(sptest.DB0_PORT)
        self.db1 = sptest.direct(sptest.DB1_PORT)
        self.table = sptest.unique_name("it_q")

    def tearDown(self):
        sptest.query(self.db0, f"DROP TABLE IF EXISTS {self.table}")
        for c in (self.conn, self.db0, self.db1):
            c.close()

    def test_ddl_goes_to_the_default_backend_only(self):
        sptest.query(self.conn, f"CREATE TABLE {self.table} (id INT PRIMARY KEY)")
        self.assertEqual(sptest.query(self.db0, f"SHOW TABLES LIKE '{self.table}'"), ((self.table,),))
        self.assertEqual(sptest.query(self.db1, f"SHOW TABLES LIKE '{self.table}'"), ())
        sptest.query(self.conn, f"ALTER TABLE {self.table} ADD COLUMN note VARCHAR(20)")
        columns = [r[0] for r in sptest.query(self.db0, f"SHOW COLUMNS FROM {self.table}")]
        self.assertEqual(columns, ["id", "note"])
        sptest.query(self.conn, f"DROP TABLE {self.table}")
        self.assertEqual(sptest.query(self.db0, f"SHOW TABLES LIKE '{self.table}'"), ())

    def test_insert_update_delete_report_counts_and_ids(self):
        sptest.query(self.conn, f"CREATE TABLE {self.table} (id INT AUTO_INCREMENT PRIMARY KEY,"
                                f" name VARCHAR(50) NOT NULL, score INT NULL)")
        with self.conn.cursor() as cur:
            self.assertEqual(cur.execute(f"INSERT INTO {self.table} (name, score) VALUES"
                                         " ('a', 1), ('b', 2), ('c', NULL)"), 3)
            self.assertEqual(cur.lastrowid, 1)  # first id of a multi-row insert
            self.assertEqual(cur.execute(f"INSERT INTO {self.table} (name) VALUES ('d')"), 1)
            self.assertEqual(cur.lastrowid, 4)
            self.assertEqual(cur.execute(f"UPDATE {self.table} SET score = score + 10"
                                         " WHERE score IS NOT NULL"), 2)
            # Matched but unchanged rows are not "affected" (the server's CLIENT_FOUND_ROWS off).
            self.assertEqual(cur.execute(f"UPDATE {self.table} SET name = 'a' WHERE id = 1"), 0)
            self.assertEqual(cur.execute(f"DELETE FROM {self.table} WHERE name IN ('b', 'd')"), 2)
            cur.execute(f"SELECT id, name, score FROM {self.table} ORDER BY id")
            self.assertEqual(cur.fetchall(), ((1, "a", 11), (3, "c", None)))
        # The direct view agrees: the writes really reached db0.
        self.assertEqual(sptest.query(self.db0, f"SELECT id, name, score FROM {self.table} ORDER BY id"),
                         ((1, "a", 11), (3, "c", None)))

    def test_select_with_nulls_and_types_matches_direct(self):
        sql = ("SELECT NULL AS n, 1 AS i, -9223372036854775808 AS big_neg,"
               " 18446744073709551615 AS big_unsigned, 'text' AS s, '' AS empty, 1.25 AS dcm,"
               " CAST(2.5 AS DOUBLE) AS dbl, CAST('2024-02-29' AS DATE) AS d,"
               " CAST('2024-02-29 23:59:58.123456' AS DATETIME(6)) AS dt, CAST('-838:59:59' AS TIME) AS t,"
               " X'00FF' AS bin, NULL AS n2")
        with self.conn.cursor() as cur:
            cur.execute(sql)
            through_proxy = cur.fetchall()
            proxy_description = cur.description
        with self.db0.cursor() as cur:
            cur.execute(sql)
            self.assertEqual(through_proxy, cur.fetchall())
            self.assertEqual(proxy_description, cur.description)
        row = through_proxy[0]
        self.assertIsNone(row[0])
        self.assertIsNone(row[12])
        self.assertEqual(row[2], -9223372036854775808)
        self.assertEqual(row[3], 18446744073709551615)
        self.assertEqual(row[5], "")
        self.assertEqual(row[6], decimal.Decimal("1.25"))
        self.assertEqual(row[8], datetime.date(2024, 2, 29))
        self.assertEqual(row[9], datetime.datetime(2024, 2, 29, 23, 59, 58, 123456))
        self.assertEqual(row[11], b"\x00\xff")

    def test_rows_with_nulls_in_every_position(self):
        sptest.query(self.conn, f"CREATE TABLE {self.table} (id INT PRIMARY KEY, a INT, b VARCHAR(5),"
                                f" c DATETIME, d BLOB)")
        rows = [(1, None, None, None, None), (2, 5, None, None, b"x"), (3, None, "y", None, None),
                (4, 7, "z", datetime.datetime(2020, 1, 1), b"")]
        with self.conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {self.table} VALUES (%s, %s, %s, %s, %s)", rows)
        self.assertEqual(sptest.query(self.conn, f"SELECT * FROM {self.table} ORDER BY id"), tuple(rows))
        self.assertEqual(sptest.scalar(self.conn, f"SELECT COUNT(*) FROM {self.table} WHERE a IS NULL"), 2)

    def test_binary_data_with_every_byte_value(self):
        sptest.query(self.conn, f"CREATE TABLE {self.table} (id INT PRIMARY KEY, v VARBINARY(300))")
        all_bytes = bytes(range(256))
        rows = [(i, bytes([i])) for i in range(256)] + [(256, all_bytes), (257, all_bytes[::-1])]
        with self.conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {self.table} VALUES (%s, %s)", rows)
        self.assertEqual(sptest.query(self.conn, f"SELECT id, v FROM {self.table} ORDER BY id"), tuple(rows))
        # Stored exactly, not merely round-tripped symmetrically.
        self.assertEqual(sptest.scalar(self.db0, f"SELECT HEX(v) FROM {self.table} WHERE id = 256"),
                         all_bytes.hex().upper())
        self.assertEqual(sptest.scalar(self.conn, "SELECT HEX(%s)", (all_bytes,)), all_bytes.hex().upper())

    def test_utf8mb4_emoji_round_trip(self):
        sptest.query(self.conn, f"CREATE TABLE {self.table} (id INT PRIMARY KEY, s VARCHAR(100))"
                                " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
        text = "emoji 😀🎉👩‍👩‍👧 flag 🇺🇦 accents héllo Ωmega cjk 中文 kana カタカナ 𝔘𝔫𝔦"
        sptest.query(self.conn, f"INSERT INTO {self.table} VALUES (1, %s)", (text,))
        self.assertEqual(sptest.scalar(self.conn, f"SELECT s FROM {self.table} WHERE id = 1"), text)
        self.assertEqual(sptest.scalar(self.conn, f"SELECT CHAR_LENGTH(s) FROM {self.table}"), len(text))
        self.assertEqual(sptest.scalar(self.db0, f"SELECT HEX(s) FROM {self.table}"),
                         text.encode("utf-8").hex().upper())
        self.assertEqual(sptest.scalar(self.conn, "SELECT %s", ("🚀",)), "🚀")
        self.assertEqual(sptest.scalar(self.conn, f"SELECT id FROM {self.table} WHERE s LIKE %s",
                                       ("%🇺🇦%",)), 1)

    def test_errors_keep_the_session_usable(self):
        with self.assertRaises(pymysql.err.ProgrammingError) as ctx:
            sptest.query(self.conn, "SELEC 1")
        self.assertEqual(ctx.exception.args[0], 1064)
        with self.assertRaises(pymysql.err.ProgrammingError) as ctx:
            sptest.query(self.conn, f"SELECT * FROM {self.table}_missing")
        self.assertEqual(ctx.exception.args[0], 1146)
        code, sqlstate, _ = sptest.capture_sqlstate(lambda: sptest.query(self.conn, "SELECT * FROM nope_zz"))
        self.assertEqual((code, sqlstate), (1146, "42S02"))
        self.assertEqual(sptest.scalar(self.conn, "SELECT 42"), 42)

    def test_call_of_a_procedure_that_used_a_cursor_returns_its_rows(self):
        # The result set's column EOF carries SERVER_STATUS_CURSOR_EXISTS (the
        # procedure's own cursor); before, the proxy took that for a cursor
        # execute's end and the client waited forever (issue 20).
        name = sptest.unique_name("it_cursor_proc")
        sptest.query(self.conn, f"CREATE PROCEDURE {name}() BEGIN DECLARE x INT; "
                                f"DECLARE c CURSOR FOR SELECT 41; OPEN c; FETCH c INTO x; CLOSE c; "
                                f"SELECT x + 1 AS y; SELECT 'second'; END")
        try:
            with self.conn.cursor() as cur:
                cur.execute(f"CALL {name}()")
                self.assertEqual(cur.fetchall(), ((42,),))
                self.assertTrue(cur.nextset())
                self.assertEqual(cur.fetchall(), (("second",),))
            self.assertEqual(sptest.scalar(self.conn, "SELECT 7"), 7)
        finally:
            sptest.query(self.conn, f"DROP PROCEDURE {name}")

    def test_ping_and_empty_result(self):
        self.conn.ping(reconnect=False)
        sptest.query(self.conn, f"CREATE TABLE {self.table} (id INT)")
        with self.conn.cursor() as cur:
            self.assertEqual(cur.execute(f"SELECT id FROM {self.table}"), 0)
            self.assertEqual(cur.fetchall(), ())
            self.assertEqual([d[0] for d in cur.description], ["id"])

    def test_com_field_list(self):
        """COM_FIELD_LIST (what the mariadb CLI sends without -A) returns the table's columns."""
        sptest.query(self.conn, f"CREATE TABLE {self.table} (id INT, name VARCHAR(10), body BLOB)")
        self.conn._execute_command(COMMAND.COM_FIELD_LIST, self.table.encode() + b"\0")
        fields = []
        while True:
            packet = self.conn._read_packet()
            if packet.is_eof_packet():
                break
            fields.append(FieldDescriptorPacket(packet.get_all_data(), self.conn.encoding))
        self.assertEqual([f.name for f in fields], ["id", "name", "body"])
        self.assertTrue(all(f.table_name == self.table for f in fields))
        # The connection is in sync afterwards.
        self.assertEqual(sptest.scalar(self.conn, "SELECT 7"), 7)


if __name__ == "__main__":
    unittest.main()
