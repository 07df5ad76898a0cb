"""Logging in through the proxy (which authenticates clients itself, with the
accounts in its config) and commands it must refuse."""
import socket
import struct
import unittest

import pymysql

from . import sptest


def login(user, password, database="im"):
    return lambda: sptest.proxy(user=user, password=password, database=database).close()


class Authentication(unittest.TestCase):
    def test_good_login(self):
        conn = sptest.proxy()
        try:
            self.assertEqual(sptest.scalar(conn, "SELECT 1"), 1)
            self.assertEqual(sptest.scalar(conn, "SELECT DATABASE()"), "im")
        finally:
            conn.close()

    def test_wrong_password_is_1045_28000(self):
        code, sqlstate, message = sptest.capture_sqlstate(login("app", "not_the_password"))
        self.assertEqual((code, sqlstate), (1045, "28000"))
        self.assertIn("app", message)

    def test_empty_password_is_rejected(self):
        code, sqlstate, _ = sptest.capture_sqlstate(login("app", ""))
        self.assertEqual((code, sqlstate), (1045, "28000"))

    def test_unknown_user_is_1045(self):
        code, sqlstate, _ = sptest.capture_sqlstate(login("nobody_here", "app_pw"))
        self.assertEqual((code, sqlstate), (1045, "28000"))

    def test_backend_account_is_not_a_proxy_account(self):
        # The proxy's own login to the backends must not be usable by clients.
        code, _, _ = sptest.capture_sqlstate(login("proxy", "proxy_pw"))
        self.assertEqual(code, 1045)

    def test_unknown_database_at_login_fails(self):
        code, sqlstate, _ = sptest.capture_sqlstate(login("app", "app_pw", database="it_no_such_database_zz"))
        # The server's answer to the backend account: 1049 with global
        # privileges, 1044 under the least-privilege grants (docs/security.md).
        server = sptest.capture_sqlstate(lambda: sptest.direct(database="it_no_such_database_zz"))
        self.assertEqual((code, sqlstate), server[:2])
        self.assertIn(code, (1044, 1049))
        # The proxy is still there for the next client.
        conn = sptest.proxy()
        try:
            self.assertEqual(sptest.scalar(conn, "SELECT 1"), 1)
        finally:
            conn.close()

    def test_failed_logins_do_not_disturb_others(self):
        conn = sptest.proxy()
        try:
            for _ in range(5):
                with self.assertRaises(pymysql.err.OperationalError):
                    login("app", "bad")()
            self.assertEqual(sptest.scalar(conn, "SELECT 2"), 2)
        finally:
            conn.close()


class Commands(unittest.TestCase):
    def setUp(self):
        self.conn = sptest.proxy()

    def tearDown(self):
        self.conn.close()

    def test_unknown_command_gets_an_error_and_session_survives(self):
        self.conn._execute_command(0x7E, b"")  # no such command in the protocol
        with self.assertRaises(pymysql.err.MySQLError) as ctx:
            self.conn._read_ok_packet()
        self.assertIsInstance(ctx.exception.args[0], int)
        self.assertEqual(sptest.scalar(self.conn, "SELECT 3"), 3)

    def test_ping_and_reset_of_statement_sequence(self):
        for _ in range(3):
            self.conn.ping(reconnect=False)
        self.assertEqual(sptest.scalar(self.conn, "SELECT 4"), 4)


def _read_packet(sock):
    """(sequence id, payload) of the next packet, or None when the peer closed."""
    def exactly(n):
        data = b""
        while len(data) < n:
            try:
                chunk = sock.recv(n - len(data))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            data += chunk
        return data
    header = exactly(4)
    if header is None:
        return None
    length = header[0] | header[1] << 8 | header[2] << 16
    return header[3], exactly(length)


def _framed(payload, seq):
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


class PacketsOutOfOrder(unittest.TestCase):
    """A packet with another sequence id than expected: MariaDB answers
    1156 08S01 "Got packets out of order" under the id it expected and closes
    the connection; the proxy answers the same (compared with a backend
    directly, issue 15)."""

    def answer_to_command_with_seq(self, conn, seq):
        sock = conn._sock
        sock.sendall(_framed(b"\x03SELECT 1", seq))
        first = _read_packet(sock)
        after = _read_packet(sock)
        return first, after

    def test_command_not_starting_at_zero(self):
        for seq in (1, 5, 255):
            with self.subTest(seq=seq):
                got = self.answer_to_command_with_seq(sptest.proxy(), seq)
                want = self.answer_to_command_with_seq(sptest.direct(), seq)
                self.assertEqual(want[0][0], 0)
                self.assertEqual(want[0][1][:3], b"\xff\x84\x04")  # 1156
                self.assertEqual(got[0], want[0])  # same id, code, SQLSTATE, message
                self.assertIsNone(want[1])
                self.assertIsNone(got[1], "the proxy must close the connection")

    def login_response_with_seq(self, port, seq):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        try:
            greeting = _read_packet(sock)
            self.assertEqual(greeting[0], 0)
            caps = 0x0200 | 0x8000 | 0x80000  # PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH
            response = struct.pack("<IIB", caps, 1 << 24, 33) + b"\0" * 23 + b"app\0" + b"\x00" + \
                b"mysql_native_password\0"
            sock.sendall(_framed(response, seq))
            return _read_packet(sock), _read_packet(sock)
        finally:
            sock.close()

    def test_login_response_with_another_id(self):
        for seq in (0, 2, 9):
            with self.subTest(seq=seq):
                got = self.login_response_with_seq(sptest.PROXY_PORT, seq)
                want = self.login_response_with_seq(sptest.DB0_PORT, seq)
                self.assertEqual(want[0][0], 1)
                self.assertEqual(got[0], want[0])
                self.assertIsNone(want[1])
                self.assertIsNone(got[1], "the proxy must close the connection")


if __name__ == "__main__":
    unittest.main()
