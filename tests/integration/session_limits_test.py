"""Per-session and per-user limits (issue 12, items 2-3): prepared statements
per session, COM_STMT_SEND_LONG_DATA bytes per session, users[].max_connections.

A proxy of its own (free ports, scratch config under SP_SCATTER_IT_DIR, helpers
of scatter_failure_proxy.py) in front of the shared test cluster, with
  limits: {max_prepared_statements_per_session: 3, max_long_data_bytes_per_session: 4096}
and a second user `it_limited` with max_connections: 2. Prepared statements
go over the wire by hand (PyMySQL has no server-side prepare): COM_STMT_PREPARE,
COM_STMT_SEND_LONG_DATA, COM_STMT_EXECUTE, COM_STMT_CLOSE.
"""
import struct
import time
import unittest

import pymysql

import scatter_failure_proxy as sf

ER_TOO_MANY_USER_CONNECTIONS = 1203
ER_MAX_PREPARED_STMT_COUNT_REACHED = 1461
ER_UNKNOWN_ERROR = 1105
MAX_STATEMENTS = 3
MAX_LONG_DATA = 4096
LIMITED_USER, LIMITED_PASSWORD = "it_limited", "it_limited_pw"


def start_proxy():
    run = sf.ProxyRun("session_limits", sf.ShardedTable("it_session_limits_unused"), {"multi_shard_writes": "refuse"})
    with open(run.config_path) as f:
        text = f.read()
    text = text.replace("users:\n", "limits:\n"
                        f"  max_prepared_statements_per_session: {MAX_STATEMENTS}\n"
                        f"  max_long_data_bytes_per_session: {MAX_LONG_DATA}\n"
                        "users:\n"
                        f"  - {{name: {LIMITED_USER}, password: {LIMITED_PASSWORD}, max_connections: 2}}\n", 1)
    with open(run.config_path, "w") as f:
        f.write(text)
    run.start()
    return run


class Raw:
    """COM_STMT_* over a PyMySQL connection's socket."""

    def __init__(self, conn):
        self.conn = conn

    def prepare(self, sql):
        """Statement id; raises pymysql errors on ERR."""
        self.conn._execute_command(0x16, sql)
        ok = self.conn._read_packet().get_all_data()
        stmt_id, columns, params = struct.unpack("<IHH", ok[1:9])
        for count in (params, columns):
            for _ in range(count + 1 if count else 0):  # definitions, then EOF (no DEPRECATE_EOF)
                self.conn._read_packet()
        return stmt_id

    def long_data(self, stmt_id, param, data):
        self.conn._execute_command(0x18, struct.pack("<IH", stmt_id, param) + data)  # no answer

    def close(self, stmt_id):
        self.conn._execute_command(0x19, struct.pack("<I", stmt_id))  # no answer

    def execute_blob_param(self, stmt_id):
        """Executes a one-parameter statement whose BLOB parameter was sent as
        long data; returns the first column of its one row as an integer (None for NULL)."""
        payload = struct.pack("<IBI", stmt_id, 0, 1) + b"\x01" + b"\x01" + b"\xfc\x00"
        self.conn._execute_command(0x17, payload)
        self.conn._read_packet()  # column count 1
        column_type = self.conn._read_packet().get_all_data()[-6]  # column definition
        self.conn._read_packet()  # EOF
        width = {0x01: "<b", 0x02: "<h", 0x03: "<i", 0x09: "<i", 0x08: "<q"}[column_type]
        value = None
        while True:
            packet = self.conn._read_packet().get_all_data()
            if packet[0] == 0xFE and len(packet) < 9:
                return value
            if not packet[1] & 0x04:  # NULL bitmap: bit 2 is column 0
                value = struct.unpack_from(width, packet, 2)[0]


class SessionLimitsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.run_ = start_proxy()

    @classmethod
    def tearDownClass(cls):
        cls.run_.stop()

    def setUp(self):
        self.assertTrue(self.run_.alive(), self.run_.log_tail())

    def test_prepared_statements_per_session(self):
        conn = self.run_.connect()
        try:
            raw = Raw(conn)
            ids = [raw.prepare(f"SELECT {i} + ?") for i in range(MAX_STATEMENTS)]
            with self.assertRaises(pymysql.err.MySQLError) as refused:
                raw.prepare("SELECT 99 + ?")
            code, message = refused.exception.args
            self.assertEqual(code, ER_MAX_PREPARED_STMT_COUNT_REACHED, message)
            self.assertIn(f"current value: {MAX_STATEMENTS}", message)
            raw.close(ids[0])
            raw.prepare("SELECT 100 + ?")  # a closed statement frees its place
            self.assertEqual(sf.rows(conn, "SELECT 1"), ((1,),))
        finally:
            conn.close()
        other = self.run_.connect()  # the limit is per session
        try:
            raw = Raw(other)
            for i in range(MAX_STATEMENTS):
                raw.prepare(f"SELECT {i} + ?")
        finally:
            other.close()

    def test_long_data_bytes_per_session(self):
        conn = self.run_.connect()
        try:
            raw = Raw(conn)
            first, second = raw.prepare("SELECT LENGTH(?)"), raw.prepare("SELECT LENGTH(?) + 0")
            raw.long_data(first, 0, b"x" * 3000)
            self.assertEqual(raw.execute_blob_param(first), 3000)  # consumed by the execute
            raw.long_data(first, 0, b"x" * 3000)
            raw.long_data(second, 0, b"y" * 1500)  # 4500 held by the session: over 4096
            self.assertEqual(raw.execute_blob_param(first), 3000)
            with self.assertRaises(pymysql.err.MySQLError) as refused:
                raw.execute_blob_param(second)
            code, message = refused.exception.args
            self.assertEqual(code, ER_UNKNOWN_ERROR, message)
            self.assertIn("mysql_send_long_data", message)
            self.assertIn("limits.max_long_data_bytes_per_session", message)
            # The refused data is gone with the execute; the session and the statement go on.
            raw.long_data(second, 0, b"y" * 100)
            self.assertEqual(raw.execute_blob_param(second), 100)
            for _ in range(3):  # chunks that each fit, but not together
                raw.long_data(first, 0, b"z" * 2000)
            with self.assertRaises(pymysql.err.MySQLError):
                raw.execute_blob_param(first)
            self.assertEqual(sf.rows(conn, "SELECT 2"), ((2,),))
        finally:
            conn.close()

    def test_user_max_connections(self):
        def connect():
            return pymysql.connect(host=sf.HOST, port=self.run_.port, user=LIMITED_USER, password=LIMITED_PASSWORD,
                                   connect_timeout=10)
        held = [connect(), connect()]
        try:
            with self.assertRaises(pymysql.err.MySQLError) as refused:
                connect()
            code, message = refused.exception.args
            self.assertEqual(code, ER_TOO_MANY_USER_CONNECTIONS, message)
            self.assertEqual(message, f"User {LIMITED_USER} already has more than 'max_user_connections' "
                                      "active connections")
            app = self.run_.connect()  # other users are not counted with it_limited
            app.close()
            held.pop().close()
            for _ in range(50):  # the place is free once the session's coroutine ends
                try:
                    held.append(connect())
                    break
                except pymysql.err.MySQLError:
                    time.sleep(0.05)
            self.assertEqual(len(held), 2)
        finally:
            for conn in held:
                conn.close()


if __name__ == "__main__":
    unittest.main()
