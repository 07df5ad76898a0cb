"""Session state through the proxy: transactions, USE, SET NAMES, autocommit,
and isolation between concurrent client sessions even though the proxy
multiplexes backend connections."""
import threading
import unittest

import pymysql

from . import sptest


class Transactions(unittest.TestCase):
    def setUp(self):
        self.table = sptest.unique_name("it_tx")
        self.writer = sptest.proxy(autocommit=True)
        self.reader = sptest.proxy(autocommit=True)
        self.db0 = sptest.direct(sptest.DB0_PORT)
        sptest.query(self.writer, f"CREATE TABLE {self.table} (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB")

    def tearDown(self):
        sptest.query(self.db0, f"DROP TABLE IF EXISTS {self.table}")
        for c in (self.writer, self.reader, self.db0):
            c.close()

    def count(self, conn):
        return sptest.scalar(conn, f"SELECT COUNT(*) FROM {self.table}")

    def test_rollback_is_really_undone(self):
        sptest.query(self.writer, "BEGIN")
        sptest.query(self.writer, f"INSERT INTO {self.table} VALUES (1, 'a'), (2, 'b')")
        self.assertEqual(self.count(self.writer), 2)  # visible inside the transaction
        self.assertEqual(self.count(self.reader), 0)  # not to another session
        self.assertEqual(self.count(self.db0), 0)
        sptest.query(self.writer, "ROLLBACK")
        self.assertEqual(self.count(self.writer), 0)
        self.assertEqual(self.count(self.reader), 0)
        self.assertEqual(self.count(self.db0), 0)

    def test_commit_is_visible_to_other_sessions(self):
        sptest.query(self.writer, "START TRANSACTION")
        sptest.query(self.writer, f"INSERT INTO {self.table} VALUES (1, 'a')")
        sptest.query(self.writer, f"UPDATE {self.table} SET v = 'b' WHERE id = 1")
        self.assertEqual(self.count(self.reader), 0)
        sptest.query(self.writer, "COMMIT")
        self.assertEqual(sptest.query(self.reader, f"SELECT id, v FROM {self.table}"), ((1, "b"),))
        self.assertEqual(sptest.query(self.db0, f"SELECT id, v FROM {self.table}"), ((1, "b"),))

    def test_driver_level_commit_and_rollback(self):
        conn = sptest.proxy(autocommit=False)
        try:
            sptest.query(conn, f"INSERT INTO {self.table} VALUES (1, 'x')")
            conn.rollback()
            self.assertEqual(self.count(self.reader), 0)
            sptest.query(conn, f"INSERT INTO {self.table} VALUES (2, 'y')")
            conn.commit()
            self.assertEqual(sptest.query(self.reader, f"SELECT id FROM {self.table}"), ((2,),))
        finally:
            conn.close()

    def test_set_autocommit_0_session(self):
        conn = sptest.proxy(autocommit=None)  # leave the server default; set it in SQL
        try:
            self.assertEqual(sptest.scalar(conn, "SELECT @@autocommit"), 1)
            sptest.query(conn, "SET autocommit = 0")
            self.assertEqual(sptest.scalar(conn, "SELECT @@autocommit"), 0)
            sptest.query(conn, f"INSERT INTO {self.table} VALUES (1, 'a')")
            self.assertEqual(self.count(self.reader), 0)  # implicit transaction still open
            sptest.query(conn, "COMMIT")
            self.assertEqual(self.count(self.reader), 1)
            sptest.query(conn, f"DELETE FROM {self.table}")
            sptest.query(conn, "ROLLBACK")
            self.assertEqual(self.count(self.reader), 1)
            # Another session is not affected by this one's autocommit setting.
            self.assertEqual(sptest.scalar(self.reader, "SELECT @@autocommit"), 1)
        finally:
            conn.close()

    def test_session_closed_mid_transaction_rolls_back(self):
        conn = sptest.proxy()
        sptest.query(conn, "BEGIN")
        sptest.query(conn, f"INSERT INTO {self.table} VALUES (9, 'gone')")
        conn.close()
        # The proxy must not hand that open transaction to anyone else, nor commit it.
        sptest.wait_until(lambda: self.count(self.db0) == 0, 10, what="row of closed session absent")
        self.assertEqual(self.count(self.reader), 0)


class SessionState(unittest.TestCase):
    def setUp(self):
        self.other_db = sptest.unique_name("it_db")
        self.db0 = sptest.root(sptest.DB0_PORT)
        sptest.query(self.db0, f"CREATE DATABASE {self.other_db}")
        sptest.grant_backend_account(self.db0, self.other_db, "SELECT")
        sptest.query(self.db0, f"CREATE TABLE {self.other_db}.t (id INT)")
        sptest.query(self.db0, f"INSERT INTO {self.other_db}.t VALUES (5)")

    def tearDown(self):
        sptest.revoke_backend_account(self.db0, self.other_db)
        sptest.query(self.db0, f"DROP DATABASE IF EXISTS {self.other_db}")
        self.db0.close()

    def test_use_switches_database(self):
        conn = sptest.proxy()
        try:
            self.assertEqual(sptest.scalar(conn, "SELECT DATABASE()"), "im")
            sptest.query(conn, f"USE {self.other_db}")
            self.assertEqual(sptest.scalar(conn, "SELECT DATABASE()"), self.other_db)
            self.assertEqual(sptest.scalar(conn, "SELECT id FROM t"), 5)
            conn.select_db("im")  # COM_INIT_DB
            self.assertEqual(sptest.scalar(conn, "SELECT DATABASE()"), "im")
            # The server's own answer for the backend account: 1049 for an
            # account that may see every database, 1044 under the
            # least-privilege grants (docs/security.md).
            direct = sptest.direct()
            try:
                with self.assertRaises(pymysql.err.OperationalError) as server:
                    sptest.query(direct, "USE it_no_such_database")
            finally:
                direct.close()
            with self.assertRaises(pymysql.err.OperationalError) as ctx:
                sptest.query(conn, "USE it_no_such_database")
            self.assertEqual(ctx.exception.args[0], server.exception.args[0])
            self.assertIn(ctx.exception.args[0], (1044, 1049))
            self.assertEqual(sptest.scalar(conn, "SELECT DATABASE()"), "im")  # unchanged
        finally:
            conn.close()

    def test_use_changes_what_a_cached_shape_means(self):
        # `msg` unqualified is the sharded table under `im` and the other
        # database's own table after USE; the statement shape is the same, so
        # a plan cache answering it from an earlier use would send it to the
        # wrong place. Several connections: each may run on another worker.
        sptest.query(self.db0, f"CREATE TABLE {self.other_db}.msg (conv_id BIGINT, body VARCHAR(20))")
        sptest.query(self.db0, f"INSERT INTO {self.other_db}.msg VALUES (5, 'other_db row')")
        shard = sptest.direct(sptest.DB0_PORT)  # conv_id 5: msg_05 on db0 (conf/shard_map.yaml)
        conns = [sptest.proxy() for _ in range(4)]
        try:
            routed = sptest.query(shard, "SELECT COUNT(*) FROM msg_05 WHERE conv_id = 5")
            for conn in conns:
                sptest.query(conn, f"USE {self.other_db}")
                for _ in range(2):  # planned, then hit
                    self.assertEqual(sptest.query(conn, "SELECT COUNT(*), MAX(body) FROM msg WHERE conv_id = 5"),
                                     ((1, "other_db row"),))
                sptest.query(conn, "USE im")
                self.assertEqual(sptest.query(conn, "SELECT COUNT(*) FROM msg WHERE conv_id = 5"), routed)
                conn.select_db(self.other_db)  # COM_INIT_DB, and back again
                self.assertEqual(sptest.query(conn, "SELECT COUNT(*), MAX(body) FROM msg WHERE conv_id = 5"),
                                 ((1, "other_db row"),))
        finally:
            for conn in conns:
                conn.close()
            shard.close()

    def test_login_without_database_then_use(self):
        conn = sptest.proxy(user="nodb", password="nodb_pw", database=None)
        try:
            sptest.query(conn, f"USE {self.other_db}")
            self.assertEqual(sptest.scalar(conn, "SELECT id FROM t"), 5)
        finally:
            conn.close()

    def test_set_names(self):
        conn = sptest.proxy()
        other = sptest.proxy()
        try:
            sptest.query(conn, "SET NAMES latin1")
            self.assertEqual(sptest.scalar(conn, "SELECT @@character_set_client"), "latin1")
            self.assertEqual(sptest.scalar(conn, "SELECT @@character_set_results"), "latin1")
            self.assertEqual(sptest.scalar(other, "SELECT @@character_set_client"), "utf8mb4")
            sptest.query(conn, "SET NAMES utf8mb4 COLLATE utf8mb4_bin")
            self.assertEqual(sptest.scalar(conn, "SELECT @@collation_connection"), "utf8mb4_bin")
            self.assertEqual(sptest.scalar(conn, "SELECT %s", ("ü😀",)), "ü😀")
        finally:
            conn.close()
            other.close()

    def test_concurrent_sessions_keep_separate_state(self):
        a, b = sptest.proxy(), sptest.proxy()
        try:
            sptest.query(a, f"USE {self.other_db}")
            sptest.query(a, "SET SESSION sql_mode = 'ANSI_QUOTES'")
            sptest.query(a, "SET @who = 'a'")
            sptest.query(b, "SET SESSION sql_mode = 'TRADITIONAL'")
            sptest.query(b, "SET @who = 'b'")
            for _ in range(20):  # interleaved: a multiplexing proxy must restore each session's state
                self.assertEqual(sptest.query(a, "SELECT DATABASE(), @@sql_mode, @who"),
                                 ((self.other_db, "ANSI_QUOTES", "a"),))
                self.assertEqual(sptest.query(b, "SELECT DATABASE(), @who"), (("im", "b"),))
                self.assertIn("STRICT_TRANS_TABLES", sptest.scalar(b, "SELECT @@sql_mode"))
            # The modes really apply: "x" is an identifier for a, a string for b.
            with self.assertRaises(pymysql.err.OperationalError) as ctx:
                sptest.query(a, 'SELECT "x"')
            self.assertEqual(ctx.exception.args[0], 1054)
            self.assertEqual(sptest.scalar(b, 'SELECT "x"'), "x")
            fresh = sptest.proxy()
            try:
                self.assertEqual(sptest.query(fresh, "SELECT DATABASE(), @who"), (("im", None),))
            finally:
                fresh.close()
        finally:
            a.close()
            b.close()

    def test_parallel_sessions_in_threads(self):
        errors = []

        def worker(n):
            try:
                conn = sptest.proxy()
                try:
                    sptest.query(conn, f"SET @n = {n}")
                    for i in range(30):
                        got = sptest.query(conn, "SELECT @n, %s", (i,))
                        if got != ((n, i),):
                            errors.append(f"session {n} round {i}: {got!r}")
                            return
                finally:
                    conn.close()
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(f"session {n}: {e!r}")

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertEqual(errors, [])


class Diagnostics(unittest.TestCase):
    """SHOW WARNINGS belongs to the session (issue 20): before, a statement's
    warnings stayed on the pooled backend connection, so the next SHOW
    WARNINGS of the same session could show nothing and a new session could
    see another session's notes."""

    def test_warnings_of_the_previous_statement_and_no_one_elses(self):
        a, b = sptest.proxy(), sptest.proxy()
        try:
            self.assertEqual(sptest.scalar(a, "SELECT CAST('abc' AS INT)"), 0)
            # b's statement may run on the very connection a's did.
            self.assertEqual(sptest.query(b, "SHOW WARNINGS"), ())
            self.assertEqual(sptest.scalar(b, "SELECT 1"), 1)
            self.assertEqual(sptest.query(b, "SHOW WARNINGS"), ())
            self.assertEqual(sptest.query(a, "SHOW WARNINGS"),
                             (("Warning", 1292, "Truncated incorrect INTEGER value: 'abc'"),))
            self.assertEqual(sptest.query(a, "SHOW COUNT(*) WARNINGS"), ((1,),))
            self.assertEqual(sptest.query(a, "SHOW ERRORS"), ())
            # As on the server, a statement naming no table keeps the area;
            # one naming a table resets it.
            sptest.query(a, "SELECT 2")
            self.assertEqual(len(sptest.query(a, "SHOW WARNINGS")), 1)
            sptest.query(a, "SELECT COUNT(*) FROM msg WHERE conv_id = 1")
            self.assertEqual(sptest.query(a, "SHOW WARNINGS"), ())
            # An error is the area's condition, the server's or the proxy's own.
            with self.assertRaises(pymysql.err.MySQLError):
                sptest.query(a, "SELECT * FROM it_no_such_table_here")
            self.assertEqual(sptest.query(a, "SHOW ERRORS"),
                             (("Error", 1146, "Table 'im.it_no_such_table_here' doesn't exist"),))
            with self.assertRaises(pymysql.err.MySQLError):
                sptest.query(a, "SELECT * FROM msg")
            errors = sptest.query(a, "SHOW ERRORS")
            self.assertEqual(len(errors), 1)
            self.assertEqual(errors[0][1], 9101)
            # @@warning_count and GET DIAGNOSTICS see an empty area, not another session's.
            sptest.query(a, "SELECT COUNT(*) FROM msg WHERE conv_id = 1")
            sptest.query(b, "SELECT CAST('xyz' AS INT)")
            self.assertEqual(sptest.scalar(a, "SELECT @@warning_count"), 0)
        finally:
            a.close()
            b.close()


class PinnedSessionScatter(unittest.TestCase):
    """A session pinned by state only its users need (a user variable, a
    temporary table, FOUND_ROWS(), a named lock) still runs statements that
    span shards, on pooled connections, and keeps its pinned state; one that
    uses the state, or state that changes every statement (SET TRANSACTION,
    SET ROLE), a transaction or LOCK TABLES are refused with 9120."""

    COUNT = "SELECT COUNT(*), SUM(seq) FROM msg WHERE conv_id < 1000"

    def setUp(self):
        self.conn = sptest.proxy()
        self.expected = sptest.query(self.conn, self.COUNT)  # unpinned: the reference

    def tearDown(self):
        self.conn.close()

    def assertScatterRefused(self, sql=None):
        with self.assertRaises(pymysql.err.OperationalError) as refused:
            sptest.query(self.conn, sql or self.COUNT)
        self.assertEqual(refused.exception.args[0], 9120, refused.exception.args)
        return refused.exception.args[1]

    def test_state_only_its_users_need_does_not_stop_a_scatter(self):
        for pin in ("SET @x = 5", "SELECT @y := 7", "CREATE TEMPORARY TABLE it_pin_tmp (a INT)",
                    "SELECT GET_LOCK('it_pin_lock', 1)", "SELECT FOUND_ROWS()", "PREPARE it_pin_s FROM 'SELECT 1'"):
            with self.subTest(pin=pin):
                conn = sptest.proxy()
                try:
                    sptest.query(conn, "SET @x = 5")
                    sptest.query(conn, pin)
                    self.assertEqual(sptest.query(conn, self.COUNT), self.expected)
                    # Twice: the first scatter left the pinned connection in place.
                    self.assertEqual(sptest.query(conn, self.COUNT), self.expected)
                    self.assertEqual(sptest.scalar(conn, "SELECT @x"), 5, "the user variable survives the scatter")
                    if "TEMPORARY" in pin:
                        self.assertEqual(sptest.scalar(conn, "SELECT COUNT(*) FROM it_pin_tmp"), 0)
                    if "GET_LOCK" in pin:
                        self.assertEqual(sptest.scalar(conn, "SELECT RELEASE_LOCK('it_pin_lock')"), 1,
                                         "the named lock is still held by this session's connection")
                    # A scatter that reads the pinned state is refused, named as such.
                    with self.assertRaises(pymysql.err.OperationalError) as refused:
                        sptest.query(conn, "SELECT COUNT(*) FROM msg WHERE conv_id < 1000 AND msg_type = @x")
                    self.assertEqual(refused.exception.args[0], 9120)
                    self.assertIn("uses state that lives on this session's connection", refused.exception.args[1])
                finally:
                    conn.close()

    def test_state_that_changes_every_statement_stops_a_scatter(self):
        sptest.query(self.conn, "SET @x = 5")
        sptest.query(self.conn, "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED")
        self.assertIn("SET TRANSACTION", self.assertScatterRefused())

    def test_transactions_and_table_locks_stop_a_scatter(self):
        sptest.query(self.conn, "SET @x = 5")
        sptest.query(self.conn, "BEGIN")
        self.assertIn("inside a transaction", self.assertScatterRefused())
        sptest.query(self.conn, "ROLLBACK")
        self.assertEqual(sptest.query(self.conn, self.COUNT), self.expected)
        sptest.query(self.conn, "LOCK TABLES conv READ")
        self.assertIn("LOCK TABLES", self.assertScatterRefused())
        sptest.query(self.conn, "UNLOCK TABLES")
        self.assertEqual(sptest.query(self.conn, self.COUNT), self.expected)


if __name__ == "__main__":
    unittest.main()
