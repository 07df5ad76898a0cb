"""KILL through the proxy: the id is the proxy's connection id (what the handshake
reported), so the proxy carries KILL out itself and never forwards it.

Checked with PyMySQL: KILL QUERY interrupts a running statement (routed and
scatter) with 1317 while the victim's session goes on; KILL [CONNECTION] and
COM_PROCESS_KILL end the victim and roll back its open transaction; the
server's errors for an unknown id (1094), another user's session (1095), the
forms the proxy does not support (1235) and a session killing itself (1927,
1317); a backend thread whose number a client passes is left alone; and
SELECT CONNECTION_ID() answers the proxy session's id, the one KILL takes.
The mariadb CLI's Ctrl-C is in test_cli_interactive.py.
"""
import threading
import time
import unittest

import pymysql

from . import sptest

BASE_CONV = 9_310_000  # one row per shard: conv_id BASE_CONV + 0 .. 15


class Running:
    """A statement run on `conn` in a thread; .wait() gives (error or None, seconds)."""

    def __init__(self, conn, sql):
        self.error, self.seconds = None, None
        self.thread = threading.Thread(target=self._run, args=(conn, sql))
        self.thread.start()

    def _run(self, conn, sql):
        started = time.monotonic()
        try:
            sptest.query(conn, sql)
        except pymysql.err.MySQLError as e:
            self.error = e
        self.seconds = time.monotonic() - started

    def wait(self):
        self.thread.join(60)
        return self.error, self.seconds


def running_on_backends(marker):
    """How many server threads on both backends run a statement containing marker."""
    total = 0
    for port in (sptest.DB0_PORT, sptest.DB1_PORT):
        conn = sptest.direct(port)
        try:
            total += sptest.scalar(conn, "SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                                         "WHERE INFO LIKE %s AND ID <> CONNECTION_ID()", (f"%{marker}%",))
        finally:
            conn.close()
    return total


class Kill(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        conn = sptest.proxy()
        for i in range(16):
            sptest.query(conn, "DELETE FROM msg WHERE conv_id = %s", (BASE_CONV + i,))
            sptest.query(conn, "INSERT INTO msg (conv_id, seq, msg_id, sender_uid, content) VALUES (%s, 1, %s, 1, 'k')",
                         (BASE_CONV + i, BASE_CONV + i))
        conn.close()

    @classmethod
    def tearDownClass(cls):
        conn = sptest.proxy()
        for i in range(16):
            sptest.query(conn, "DELETE FROM msg WHERE conv_id = %s", (BASE_CONV + i,))
        conn.close()

    def setUp(self):
        self.victim = sptest.proxy()
        self.killer = sptest.proxy()

    def tearDown(self):
        for c in (self.victim, self.killer):
            try:
                c.close()
            except Exception:  # noqa: BLE001 - a connection the test killed
                pass

    def kill_while_running(self, sql, kill_sql, marker):
        run = Running(self.victim, sql)
        sptest.wait_until(lambda: running_on_backends(marker), 10, 0.05, f"{marker} to run on a backend")
        sptest.query(self.killer, kill_sql)
        error, seconds = run.wait()
        return error, seconds

    def test_kill_query_interrupts_a_routed_statement(self):
        error, seconds = self.kill_while_running("SELECT SLEEP(20) AS kill_routed", f"KILL QUERY {self.victim.thread_id()}",
                                                 "kill_routed")
        self.assertIsNotNone(error, "the statement ran to its end")
        self.assertEqual(error.args[0], 1317, error)
        self.assertLess(seconds, 10)
        self.assertEqual(running_on_backends("kill_routed"), 0)
        # The victim's session goes on, on a fresh backend connection.
        self.assertEqual(sptest.scalar(self.victim, "SELECT 41 + 1"), 42)

    def test_connection_id_is_the_proxy_session_id(self):
        # What the handshake reported and KILL takes, typed as the server types it
        # (INT UNSIGNED), whichever backend connection would have run it.
        self.assertEqual(sptest.scalar(self.victim, "SELECT CONNECTION_ID()"), self.victim.thread_id())
        with self.victim.cursor() as cur:
            cur.execute("select connection_id() AS cid;")
            self.assertEqual(cur.description[0][:2], ("cid", 3))
            self.assertEqual(cur.fetchall(), ((self.victim.thread_id(),),))
        # ... so killing by it works as it does on one server.
        cid = sptest.scalar(self.victim, "SELECT CONNECTION_ID()")
        error, _ = self.kill_while_running("SELECT SLEEP(20) AS kill_by_cid", f"KILL QUERY {cid}", "kill_by_cid")
        self.assertIsNotNone(error)
        self.assertEqual(error.args[0], 1317, error)

    def test_kill_query_interrupts_a_scatter(self):
        sql = (f"SELECT COUNT(*) AS kill_scatter FROM msg WHERE conv_id BETWEEN {BASE_CONV} AND {BASE_CONV + 15} "
               f"AND SLEEP(20) = 0")
        error, seconds = self.kill_while_running(sql, f"KILL QUERY {self.victim.thread_id()}", "kill_scatter")
        self.assertIsNotNone(error, "the scatter ran to its end")
        self.assertEqual(error.args[0], 1317, error)
        self.assertLess(seconds, 10)
        sptest.wait_until(lambda: running_on_backends("kill_scatter") == 0, 5, what="every shard's query to end")
        self.assertEqual(sptest.scalar(self.victim, f"SELECT COUNT(*) FROM msg WHERE conv_id BETWEEN {BASE_CONV} "
                                                    f"AND {BASE_CONV + 15}"), 16)

    def test_kill_query_of_an_idle_session_changes_nothing(self):
        sptest.query(self.killer, f"KILL QUERY {self.victim.thread_id()}")
        self.assertEqual(sptest.scalar(self.victim, "SELECT 'alive'"), "alive")

    def check_connection_killed_and_rolled_back(self, kill):
        table = sptest.unique_name("it_kill")
        sptest.query(self.killer, f"CREATE TABLE {table} (id INT PRIMARY KEY)")
        try:
            sptest.query(self.victim, "BEGIN")
            sptest.query(self.victim, f"INSERT INTO {table} VALUES (1)")
            kill()
            with self.assertRaises(pymysql.err.OperationalError) as caught:
                sptest.query(self.victim, "SELECT 1")
            self.assertIn(caught.exception.args[0], (2006, 2013), caught.exception)
            # The uncommitted row went with the connection (checked on the backend).
            direct = sptest.direct()
            try:
                sptest.wait_until(lambda: sptest.scalar(direct, f"SELECT COUNT(*) FROM {table}") == 0, 5,
                                  what="the killed transaction to roll back")
            finally:
                direct.close()
        finally:
            sptest.query(self.killer, f"DROP TABLE IF EXISTS {table}")

    def test_kill_connection_ends_the_session(self):
        self.check_connection_killed_and_rolled_back(
            lambda: sptest.query(self.killer, f"KILL CONNECTION {self.victim.thread_id()}"))

    def test_plain_kill_is_kill_connection(self):
        self.check_connection_killed_and_rolled_back(
            lambda: sptest.query(self.killer, f"KILL {self.victim.thread_id()}"))

    def test_com_process_kill(self):
        self.check_connection_killed_and_rolled_back(lambda: self.killer.kill(self.victim.thread_id()))

    def test_kill_connection_interrupts_a_running_statement(self):
        error, seconds = self.kill_while_running("SELECT SLEEP(20) AS kill_conn", f"KILL {self.victim.thread_id()}",
                                                 "kill_conn")
        self.assertIsNotNone(error)
        self.assertLess(seconds, 10)
        self.assertEqual(running_on_backends("kill_conn"), 0)

    def test_errors_as_the_server_gives_them(self):
        code, state, message = sptest.capture_sqlstate(lambda: sptest.query(self.killer, "KILL 4000000000"))
        self.assertEqual((code, state, message), (1094, "HY000", "Unknown thread id: 4000000000"))
        other = sptest.proxy(user="nodb", password="nodb_pw", database=None)
        try:
            code, _, message = sptest.capture_sqlstate(
                lambda: sptest.query(other, f"KILL QUERY {self.victim.thread_id()}"))
            self.assertEqual((code, message), (1095, f"You are not owner of thread {self.victim.thread_id()}"))
        finally:
            other.close()
        for sql in ("KILL USER app", "KILL QUERY ID 12", "KILL CONNECTION_ID()",
                    f"KILL {self.victim.thread_id()}; SELECT 1"):
            code, _, message = sptest.capture_sqlstate(lambda: sptest.query(self.killer, sql))
            self.assertEqual(code, 1235, f"{sql}: {message}")
            self.assertIn("connection to the proxy", message)
        self.assertEqual(sptest.scalar(self.victim, "SELECT 'untouched'"), "untouched")
        code, state, _ = sptest.capture_sqlstate(
            lambda: sptest.query(self.killer, f"KILL QUERY {self.killer.thread_id()}"))
        self.assertEqual((code, state), (1317, "70100"))
        code, state, _ = sptest.capture_sqlstate(lambda: sptest.query(self.killer, f"KILL {self.killer.thread_id()}"))
        self.assertEqual((code, state), (1927, "70100"))
        with self.assertRaises(pymysql.err.OperationalError):
            sptest.query(self.killer, "SELECT 1")

    def test_kill_with_a_user_variable_reads_it_as_the_server_does(self):
        # issue 30: KILL [QUERY] @id was refused with 1235. The server reads the
        # variable as CAST(@id AS UNSIGNED): NULL and non-numbers are 0.
        for setup, expected in (("", "Unknown thread id: 0"), ("SET @id = 'abc'", "Unknown thread id: 0"),
                                ("SET @id = '4000000001'", "Unknown thread id: 4000000001")):
            killer = sptest.proxy()
            try:
                if setup:
                    sptest.query(killer, setup)
                code, state, message = sptest.capture_sqlstate(lambda: sptest.query(killer, "KILL QUERY @id"))
                self.assertEqual((code, state, message), (1094, "HY000", expected), setup)
            finally:
                killer.close()
        sptest.query(self.killer, f"SET @victim = {self.victim.thread_id()}")
        sptest.query(self.killer, "KILL QUERY @victim")  # idle: nothing to interrupt, as on the server
        self.assertEqual(sptest.scalar(self.victim, "SELECT 'alive'"), "alive")
        self.check_connection_killed_and_rolled_back(lambda: sptest.query(self.killer, "KILL @victim"))

    def test_a_backend_thread_id_is_never_killed(self):
        # A client passing a backend's thread number: forwarded, this KILL would
        # end that server thread, whoever it serves.
        direct = sptest.direct()
        try:
            backend_id = direct.thread_id()
            try:
                sptest.query(self.killer, f"KILL {backend_id}")
            except pymysql.err.MySQLError:
                pass  # 1094 unless a proxy session has that number too: either way...
            self.assertEqual(sptest.scalar(direct, "SELECT 'direct alive'"), "direct alive")
        finally:
            direct.close()


if __name__ == "__main__":
    unittest.main()
