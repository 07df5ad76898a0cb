"""Logging in through the proxy (which authenticates clients itself, with the
accounts in its config) and commands it must refuse."""
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


if __name__ == "__main__":
    unittest.main()
