"""The backends themselves, without the proxy: what every other test relies on."""
import unittest

from . import sptest


class DirectBackends(unittest.TestCase):
    def test_each_backend_accepts_the_proxy_account_over_tcp(self):
        for port in (sptest.DB0_PORT, sptest.DB1_PORT):
            with self.subTest(port=port):
                conn = sptest.direct(port)
                try:
                    self.assertEqual(sptest.scalar(conn, "SELECT @@port"), port)
                    self.assertIn("MariaDB", sptest.scalar(conn, "SELECT VERSION()"))
                    self.assertEqual(sptest.scalar(conn, "SELECT DATABASE()"), "im")
                    self.assertEqual(sptest.scalar(conn, "SELECT CURRENT_USER()"), "proxy@127.0.0.1")
                finally:
                    conn.close()

    def test_settings_the_large_data_tests_need(self):
        for port in (sptest.DB0_PORT, sptest.DB1_PORT):
            with self.subTest(port=port):
                conn = sptest.direct(port)
                try:
                    self.assertGreaterEqual(sptest.scalar(conn, "SELECT @@max_allowed_packet"), 64 << 20)
                    self.assertEqual(sptest.scalar(conn, "SELECT @@character_set_server"), "utf8mb4")
                    # The Sequence engine generates test rows without inserting them.
                    self.assertEqual(sptest.scalar(conn, "SELECT SUM(seq) FROM seq_1_to_100"), 5050)
                finally:
                    conn.close()

    def test_backends_are_distinct_servers(self):
        a, b = sptest.direct(sptest.DB0_PORT), sptest.direct(sptest.DB1_PORT)
        try:
            name = sptest.unique_name("it_direct")
            sptest.query(a, f"CREATE TABLE {name} (id INT)")
            try:
                with self.assertRaises(Exception) as ctx:
                    sptest.query(b, f"SELECT * FROM {name}")
                self.assertEqual(ctx.exception.args[0], 1146)  # table doesn't exist on db1
            finally:
                sptest.query(a, f"DROP TABLE {name}")
        finally:
            a.close()
            b.close()

    def test_wrong_backend_password_is_rejected(self):
        code, sqlstate, _ = sptest.capture_sqlstate(
            lambda: __import__("pymysql").connect(host="127.0.0.1", port=sptest.DB0_PORT,
                                                  user="proxy", password="wrong"))
        self.assertEqual((code, sqlstate), (1045, "28000"))


if __name__ == "__main__":
    unittest.main()
