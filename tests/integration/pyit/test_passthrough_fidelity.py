"""Passthrough fidelity (issue 20): what MariaDB's own suite found, each
checked against the same steps sent directly to the server.

- LAST_INSERT_ID() keeps the server's meaning: an explicit-value insert does
  not change it, though its OK packet carries the value.
- A session that logs in after SET GLOBAL sees the new defaults, though the
  pool holds backend connections opened before it.
- A prepared SHOW WARNINGS (COM_STMT_PREPARE + COM_STMT_EXECUTE) answers from
  the session's own diagnostics area, byte for byte as the server does.
- MariaDB's extended column metadata (format=json, type=uuid) reaches clients
  that ask for it.
"""
import os
import threading
import time
import struct
import subprocess
import unittest

import pymysql
from pymysql.constants import COMMAND

from pyit import sptest

DBA_USER, DBA_PASSWORD = "dba", "dba_pw"


def direct_db0():
    return sptest.direct(sptest.DB0_PORT)


class Greeting(unittest.TestCase):
    def test_greeting_names_the_backends_version(self):
        # Drivers gate features on the greeting (issue 30): it is the default
        # backend's own, with a suffix, not a built-in 10.11.0.
        with direct_db0() as d:
            direct_greeting = d.get_server_info()
        conn = sptest.proxy()
        try:
            greeting = conn.get_server_info()
            self.assertEqual(greeting, direct_greeting + "-shardproxy")
            version = sptest.query(conn, "SELECT VERSION()")[0][0]
            self.assertTrue(greeting.removeprefix("5.5.5-").startswith(version), (greeting, version))
        finally:
            conn.close()


class LastInsertId(unittest.TestCase):
    def setUp(self):
        self.table = sptest.unique_name("it_lid")
        with direct_db0() as d:
            sptest.query(d, f"CREATE TABLE {self.table} (i INT AUTO_INCREMENT PRIMARY KEY, note INT)")

    def tearDown(self):
        with direct_db0() as d:
            sptest.query(d, f"DROP TABLE IF EXISTS {self.table}")

    def steps(self, conn):
        """Insert a generated id, then an explicit one: what the client sees."""
        seen = []
        with conn.cursor() as cur:
            cur.execute(f"INSERT INTO {self.table} VALUES (NULL, 0)")
            seen.append(("ok id", cur.lastrowid))
            cur.execute(f"INSERT INTO {self.table} VALUES (50, 0)")
            seen.append(("ok id", cur.lastrowid))
        seen.append(("last_insert_id", sptest.scalar(conn, "SELECT LAST_INSERT_ID()")))
        with conn.cursor() as cur:
            cur.execute(f"INSERT INTO {self.table} VALUES (NULL, 0)")
            seen.append(("ok id", cur.lastrowid))
        seen.append(("last_insert_id", sptest.scalar(conn, "SELECT LAST_INSERT_ID()")))
        return seen

    def test_explicit_insert_keeps_the_generated_id(self):
        with direct_db0() as d:
            expected = self.steps(d)
        sptest.query(direct_db0(), f"TRUNCATE TABLE {self.table}")
        with sptest.proxy() as p:
            got = self.steps(p)
        # The server: OK ids 1, 50, LAST_INSERT_ID() 1; then 51 and 51.
        self.assertEqual(expected, [("ok id", 1), ("ok id", 50), ("last_insert_id", 1),
                                    ("ok id", 51), ("last_insert_id", 51)])
        self.assertEqual(got, expected)

    def test_another_sessions_insert_does_not_leak(self):
        a, b = sptest.proxy(), sptest.proxy()
        try:
            with a.cursor() as cur:
                cur.execute(f"INSERT INTO {self.table} VALUES (NULL, 1)")
                first = cur.lastrowid
            # b's statements may run on the connection a's insert used.
            with b.cursor() as cur:
                cur.execute(f"INSERT INTO {self.table} VALUES (NULL, 2), (NULL, 3)")
            self.assertEqual(sptest.scalar(b, "SELECT LAST_INSERT_ID()"), first + 1)
            self.assertEqual(sptest.scalar(a, "SELECT LAST_INSERT_ID()"), first)
            self.assertEqual(sptest.scalar(b, "SELECT LAST_INSERT_ID()"), first + 1)
        finally:
            a.close()
            b.close()


class GlobalDefaults(unittest.TestCase):
    VARIABLE = "div_precision_increment"

    def test_new_session_sees_set_global(self):
        with direct_db0() as d:
            original = sptest.scalar(d, f"SELECT @@GLOBAL.{self.VARIABLE}")
        changed = 9 if original != 9 else 7
        # Pooled backend connections exist before the change.
        warm = [sptest.proxy() for _ in range(3)]
        for c in warm:
            self.assertEqual(sptest.scalar(c, f"SELECT @@{self.VARIABLE}"), original)
        for c in warm:
            c.close()
        dba = sptest.proxy(user=DBA_USER, password=DBA_PASSWORD)
        refused = None
        try:
            sptest.query(dba, f"SET GLOBAL {self.VARIABLE} = {changed}")
        except pymysql.err.MySQLError as e:
            refused = e.args
        if refused is not None:
            # scripts/cluster gives the backend account least privilege (no
            # SUPER): the server itself refuses the DBA's SET GLOBAL, and
            # nothing changed for anyone. The epoch behaviour with a backend
            # account that may SET GLOBAL is run by scripts/mtr (root backend:
            # func_json, func_compress, func_weight_string).
            dba.close()
            self.assertEqual(refused[0], 1227, refused)
            with direct_db0() as d:
                self.assertEqual(sptest.scalar(d, f"SELECT @@GLOBAL.{self.VARIABLE}"), original)
            with sptest.proxy() as fresh:
                self.assertEqual(sptest.scalar(fresh, f"SELECT @@{self.VARIABLE}"), original)
            return
        try:
            with dba:
                # The session that ran it keeps its own value, as on the server.
                self.assertEqual(sptest.scalar(dba, f"SELECT @@{self.VARIABLE}"), original)
            with direct_db0() as d:
                self.assertEqual(sptest.scalar(d, f"SELECT @@{self.VARIABLE}"), changed)
                third = sptest.scalar(d, "SELECT 1/3")
            for _ in range(3):
                with sptest.proxy() as fresh:
                    self.assertEqual(sptest.scalar(fresh, f"SELECT @@{self.VARIABLE}"), changed)
                    self.assertEqual(sptest.scalar(fresh, "SELECT 1/3"), third)
        finally:
            # Through the proxy, which sees the change (one made past it, on
            # the server directly, would not reach its pooled connections).
            with sptest.proxy(user=DBA_USER, password=DBA_PASSWORD) as dba:
                sptest.query(dba, f"SET GLOBAL {self.VARIABLE} = {original}")
        # Back to the original for sessions that log in now.
        with sptest.proxy() as fresh:
            self.assertEqual(sptest.scalar(fresh, f"SELECT @@{self.VARIABLE}"), original)


def read_packets(conn, count):
    return [conn._read_packet().get_all_data() for _ in range(count)]


def read_until_eof(conn):
    out = []
    while True:
        data = conn._read_packet().get_all_data()
        out.append(data)
        if data[:1] == b"\xfe" and len(data) < 9:
            return out


def prepared_show_warnings(conn, sql="SHOW WARNINGS"):
    """COM_STMT_PREPARE + COM_STMT_EXECUTE, raw: the packets of both answers
    (the statement id zeroed, it differs by nature)."""
    conn._execute_command(COMMAND.COM_STMT_PREPARE, sql)
    ok = conn._read_packet().get_all_data()
    assert ok[:1] == b"\x00", ok
    stmt_id, columns, params = struct.unpack("<IHH", ok[1:9])
    prepare = [ok[:1] + b"\x00\x00\x00\x00" + ok[5:]]
    if params:
        prepare += read_packets(conn, params + 1)
    if columns:
        prepare += read_packets(conn, columns + 1)
    conn._execute_command(COMMAND.COM_STMT_EXECUTE, struct.pack("<IBI", stmt_id, 0, 1))
    header = conn._read_packet().get_all_data()
    execute = [header] + read_packets(conn, header[0] + 1) + read_until_eof(conn)
    conn._execute_command(COMMAND.COM_STMT_CLOSE, struct.pack("<I", stmt_id))
    return prepare, execute


class PreparedShowWarnings(unittest.TestCase):
    STATEMENT = "SELECT CAST('12abc' AS SIGNED), CAST('x' AS SIGNED)"

    def test_prepared_show_warnings_is_the_sessions_area(self):
        with direct_db0() as d:
            sptest.query(d, self.STATEMENT)
            expected = prepared_show_warnings(d)
            expected_count = prepared_show_warnings(d, "SHOW COUNT(*) WARNINGS")
        self.assertEqual(len(expected[1]), 1 + 3 + 1 + 2 + 1, "server: 2 warning rows")
        a, b = sptest.proxy(), sptest.proxy()
        try:
            sptest.query(a, self.STATEMENT)
            # b resets the area of the connection a's statement may have used.
            sptest.query(b, "SELECT COUNT(*) FROM information_schema.CHARACTER_SETS")
            self.assertEqual(prepared_show_warnings(a), expected)
            self.assertEqual(prepared_show_warnings(a, "SHOW COUNT(*) WARNINGS"), expected_count)
            # Reading the area leaves it as it was, text or prepared.
            self.assertEqual(len(sptest.query(a, "SHOW WARNINGS")), 2)
            _, none = prepared_show_warnings(b)
            self.assertEqual(len(none), 1 + 3 + 1 + 1, "b's area is empty")
        finally:
            a.close()
            b.close()


    def after_failed_prepare(self, conn):
        conn._execute_command(COMMAND.COM_STMT_PREPARE, "SELECT 1 FROM")
        with self.assertRaises(pymysql.err.ProgrammingError):
            conn._read_packet()
        return (prepared_show_warnings(conn, "SHOW COUNT(*) ERRORS"), prepared_show_warnings(conn, "SHOW ERRORS"),
                sptest.query(conn, "SHOW ERRORS"))

    def test_a_failed_prepare_is_the_areas_error(self):
        # mysqltest --ps-protocol (user_var): the prepare's error, then SHOW COUNT(*) ERRORS.
        with direct_db0() as d:
            expected = self.after_failed_prepare(d)
        self.assertEqual(expected[2][0][1], 1064)
        with sptest.proxy() as p:
            self.assertEqual(self.after_failed_prepare(p), expected)


def prepared_ok(conn, sql):
    """COM_STMT_PREPARE + COM_STMT_EXECUTE of a statement without result: the
    execute's OK packet (affected rows, insert id, status, warnings)."""
    conn._execute_command(COMMAND.COM_STMT_PREPARE, sql)
    ok = conn._read_packet().get_all_data()
    assert ok[:1] == b"\x00", ok
    stmt_id, columns, params = struct.unpack("<IHH", ok[1:9])
    assert columns == 0 and params == 0, (columns, params)
    conn._execute_command(COMMAND.COM_STMT_EXECUTE, struct.pack("<IBI", stmt_id, 0, 1))
    answer = conn._read_packet().get_all_data()
    conn._execute_command(COMMAND.COM_STMT_CLOSE, struct.pack("<I", stmt_id))
    return answer


class GetDiagnosticsConditionNumber(unittest.TestCase):
    """GET DIAGNOSTICS CONDITION n with n outside the area: the server answers
    OK and the area gains Error 1758 (issue 30). Text and prepared, compared
    with the server directly."""

    PREVIOUS = "DROP TABLE IF EXISTS it_diag_none_1, it_diag_none_2"

    def run_forms(self, conn):
        out = []
        sptest.query(conn, self.PREVIOUS)
        with conn.cursor() as cur:
            cur.execute("GET DIAGNOSTICS CONDITION 5 @it_diag = MESSAGE_TEXT")
            out.append(("warnings", conn._result.warning_count))
        out.append(sptest.query(conn, "SHOW WARNINGS"))
        with conn.cursor() as cur:
            cur.execute("GET CURRENT DIAGNOSTICS CONDITION 0 @it_diag = MYSQL_ERRNO")
            out.append(("warnings", conn._result.warning_count))
        out.append(sptest.query(conn, "SHOW COUNT(*) WARNINGS"))
        sptest.query(conn, self.PREVIOUS)
        out.append(prepared_ok(conn, "GET DIAGNOSTICS CONDITION 3 @it_diag = MESSAGE_TEXT"))
        out.append(sptest.query(conn, "SHOW WARNINGS"))
        return out

    def test_beyond_the_area_adds_1758_as_the_server_does(self):
        with direct_db0() as d:
            sptest.query(d, "USE im")
            expected = self.run_forms(d)
        self.assertEqual(expected[1][-1], ("Error", 1758, "Invalid condition number"))
        with sptest.proxy() as p:
            self.assertEqual(self.run_forms(p), expected)


class ProxyProcesslist(unittest.TestCase):
    """SHOW [FULL] PROCESSLIST lists the proxy's sessions of the user, with the
    ids KILL takes (issue 30); DBA accounts keep the servers' list."""

    def test_lists_own_sessions_with_killable_ids(self):
        with direct_db0() as d, d.cursor() as cur:
            cur.execute("SHOW PROCESSLIST")
            server_columns = [c[0] for c in cur.description]
        a, b = sptest.proxy(), sptest.proxy()
        try:
            a_id, b_id = sptest.scalar(a, "SELECT CONNECTION_ID()"), sptest.scalar(b, "SELECT CONNECTION_ID()")
            outcome = []

            def sleep():
                try:
                    outcome.append(sptest.query(b, "SELECT SLEEP(5) AS it_processlist_sleep"))
                except pymysql.err.MySQLError as e:
                    outcome.append(e.args[0])

            sleeper = threading.Thread(target=sleep)
            sleeper.start()
            try:
                deadline = time.time() + 10
                while True:
                    with a.cursor() as cur:
                        cur.execute("SHOW FULL PROCESSLIST")
                        columns = [c[0] for c in cur.description]
                        rows = {r[0]: r for r in cur.fetchall()}
                    if rows.get(b_id, (None,) * 5)[4] == "Query" or time.time() > deadline:
                        break
                    time.sleep(0.05)
                self.assertEqual(columns, server_columns)
                self.assertIn(a_id, rows)
                self.assertEqual(rows[a_id][1], sptest.APP_USER)
                self.assertEqual(rows[a_id][4], "Query")
                self.assertEqual(rows[a_id][7], "SHOW FULL PROCESSLIST")
                self.assertEqual(rows[b_id][4], "Query")
                self.assertEqual(rows[b_id][7], "SELECT SLEEP(5) AS it_processlist_sleep")
                self.assertEqual({r[1] for r in rows.values()}, {sptest.APP_USER}, "only the user's own sessions")
                # The id shown is the one KILL takes.
                started = time.time()
                sptest.query(a, f"KILL QUERY {b_id}")
            finally:
                sleeper.join(timeout=20)
            self.assertLess(time.time() - started, 4, "KILL QUERY of the listed id interrupted the sleep")
            self.assertIn(outcome[0], (1317, ((1,),)), "interrupted: the server's error, or SLEEP's 1")
            with a.cursor() as cur:
                cur.execute("SHOW PROCESSLIST")
                rows = {r[0]: r for r in cur.fetchall()}
            self.assertEqual(rows[b_id][4], "Sleep")
            self.assertIsNone(rows[b_id][7])
            # Prepared, as the server: the prepare announces no columns, the execute has the 9.
            prepare, execute = prepared_show_warnings(a, "SHOW PROCESSLIST")
            self.assertEqual(struct.unpack("<H", prepare[0][5:7])[0], 0)
            self.assertEqual(execute[0][0], 9)
        finally:
            a.close()
            b.close()

    def test_dba_accounts_keep_the_servers_list(self):
        with sptest.proxy(user=DBA_USER, password=DBA_PASSWORD) as dba, dba.cursor() as cur:
            cur.execute("SHOW PROCESSLIST")
            users = {r[1] for r in cur.fetchall()}
        self.assertIn(sptest.BACKEND_USER, users, "the server's threads, as the backend account sees them")


class Ucs2Database(unittest.TestCase):
    """USE of a database whose default character set is ucs2 (issue 30): the
    server's OK then carries bytes past its session state; the proxy reads it
    as clients do (it was 9002, lost connection)."""

    DB = "it_ucs2_db"

    def setUp(self):
        self.root = pymysql.connect(host="127.0.0.1", port=sptest.DB0_PORT, user=sptest.ROOT_USER, password=sptest.ROOT_PASSWORD,
                                    autocommit=True)
        sptest.query(self.root, f"DROP DATABASE IF EXISTS {self.DB}")
        sptest.query(self.root, f"CREATE DATABASE {self.DB} CHARACTER SET ucs2")
        for host in ("127.0.0.1", "%", "localhost"):
            sptest.query(self.root, f"GRANT SELECT ON {self.DB}.* TO '{sptest.BACKEND_USER}'@'{host}'")

    def tearDown(self):
        sptest.query(self.root, f"DROP DATABASE IF EXISTS {self.DB}")
        self.root.close()

    def test_use_and_connect_with_it(self):
        with direct_db0() as d:
            sptest.query(d, f"USE {self.DB}")
            expected = sptest.query(d, "SELECT DATABASE(), @@character_set_database")
        self.assertEqual(expected, ((self.DB, "ucs2"),))
        with sptest.proxy(user=DBA_USER, password=DBA_PASSWORD) as p:
            sptest.query(p, f"USE {self.DB}")
            self.assertEqual(sptest.query(p, "SELECT DATABASE(), @@character_set_database"), expected)
            p.select_db(self.DB)  # COM_INIT_DB
            self.assertEqual(sptest.query(p, "SELECT DATABASE()"), ((self.DB,),))
        with sptest.proxy(user=DBA_USER, password=DBA_PASSWORD, database=self.DB) as p:
            self.assertEqual(sptest.query(p, "SELECT DATABASE()"), ((self.DB,),))


class ExtendedMetadata(unittest.TestCase):
    """The mariadb client negotiates MARIADB_CLIENT_EXTENDED_TYPE_INFO."""

    def client(self, port, user, password):
        args = ["mariadb", "--no-defaults", "--protocol=tcp", "-h127.0.0.1", f"-P{port}", f"-u{user}",
                f"-p{password}", "--column-type-info", "--table", sptest.DATABASE,
                "-e", f"SELECT a, u, i, JSON_OBJECT('k', 1) AS o FROM {self.table}"]
        return subprocess.run(args, capture_output=True, text=True, timeout=30, check=True).stdout

    def setUp(self):
        self.table = sptest.unique_name("it_extmeta")
        with direct_db0() as d:
            sptest.query(d, f"CREATE TABLE {self.table} (a JSON, u UUID, i INET6)")
            sptest.query(d, f"INSERT INTO {self.table} VALUES ('{{}}', UUID(), '::1')")

    def tearDown(self):
        with direct_db0() as d:
            sptest.query(d, f"DROP TABLE IF EXISTS {self.table}")

    def test_format_and_type_names_forwarded(self):
        expected = self.client(sptest.DB0_PORT, sptest.BACKEND_USER, sptest.BACKEND_PASSWORD)
        self.assertIn("(format=json)", expected)
        self.assertIn("(type=uuid)", expected)
        got = self.client(sptest.PROXY_PORT, sptest.APP_USER, sptest.APP_PASSWORD)
        strip = lambda text: [l for l in text.splitlines() if not l.startswith("Max_length")]  # noqa: E731
        self.assertEqual(strip(got), strip(expected))
        # A client that did not ask (PyMySQL) still reads the same columns.
        with sptest.proxy() as p:
            rows = sptest.query(p, f"SELECT a, i FROM {self.table}")
            self.assertEqual(rows, (("{}", "::1"),))


if __name__ == "__main__":
    unittest.main()
