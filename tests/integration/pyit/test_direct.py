"""The backends themselves, without the proxy: what every other test relies on."""
import threading
import unittest

import pymysql

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

    def test_backend_account_has_least_privilege(self):
        """scripts/cluster gives `proxy` the grants of docs/security.md: rows and DDL of im, nothing global."""
        for port in (sptest.DB0_PORT, sptest.DB1_PORT):
            with self.subTest(port=port):
                conn = sptest.direct(port)
                try:
                    grants = [g for (g,) in sptest.query(conn, "SHOW GRANTS")]
                    global_grants = [g for g in grants if " ON *.* " in g]
                    self.assertEqual(len(global_grants), 1, grants)
                    self.assertTrue(global_grants[0].startswith("GRANT USAGE ON *.*"), global_grants)
                    text = " ".join(grants)
                    for forbidden in ("ALL PRIVILEGES", "GRANT OPTION", "SUPER", "SHUTDOWN", "FILE", "PROCESS",
                                      "RELOAD"):
                        self.assertNotIn(forbidden, text)
                    self.assertIn("GRANT SELECT, INSERT, UPDATE, DELETE,", text)
                    self.assertIn("ON `im`.*", text)
                    # The server refuses what the proxy's policy refuses too.
                    for sql, code in (("SHUTDOWN", 1227), ("SET GLOBAL max_connections = 300", 1227),
                                      ("CREATE DATABASE it_never", 1044), ("SELECT * FROM mysql.user", 1142),
                                      ("GRANT SELECT ON im.* TO 'proxy'@'%'", 1044)):
                        got, _, message = sptest.capture_sqlstate(lambda: sptest.query(conn, sql))
                        self.assertEqual(got, code, f"{sql}: {message}")
                    self.assertIsNone(sptest.scalar(conn, "SELECT LOAD_FILE('/etc/passwd')"))
                finally:
                    conn.close()

    def test_backend_account_kills_its_own_queries(self):
        """KILL QUERY of another connection of the same account needs no privilege (client KILL, shard timeouts)."""
        victim, killer = sptest.direct(), sptest.direct()
        try:
            victim_id = sptest.scalar(victim, "SELECT CONNECTION_ID()")
            outcome = {}

            def sleep():
                try:
                    outcome["rows"] = sptest.query(victim, "SELECT SLEEP(30)")
                except pymysql.err.MySQLError as e:
                    outcome["error"] = e.args[0]

            thread = threading.Thread(target=sleep)
            thread.start()
            sptest.wait_until(lambda: any(r[0] == victim_id and (r[7] or "").startswith("SELECT SLEEP")
                                          for r in sptest.query(killer, "SHOW FULL PROCESSLIST")),
                              10, what="the sleep running")
            sptest.query(killer, f"KILL QUERY {victim_id}")
            thread.join(30)
            # MariaDB ends an interrupted SLEEP() early with 1 (or error 1317).
            self.assertTrue(outcome.get("rows") == ((1,),) or outcome.get("error") == 1317, outcome)
        finally:
            victim.close()
            killer.close()

    def test_wrong_backend_password_is_rejected(self):
        code, sqlstate, _ = sptest.capture_sqlstate(
            lambda: __import__("pymysql").connect(host="127.0.0.1", port=sptest.DB0_PORT,
                                                  user="proxy", password="wrong"))
        self.assertEqual((code, sqlstate), (1045, "28000"))


if __name__ == "__main__":
    unittest.main()
