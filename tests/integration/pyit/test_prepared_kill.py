"""KILL and CONNECTION_ID() in every form that reaches the proxy (issue 30).

The text KILL is carried out by the proxy with the ids its clients see
(test_kill.py). The same statement prepared with COM_STMT_PREPARE, prepared
in SQL (PREPARE ... FROM '...' or FROM @variable), run by EXECUTE IMMEDIATE
or inside a stored program must never reach a backend, where its number
would name a server thread, possibly another client's backend connection.
Checked here, each against what the server does with the same steps where
the server is the reference:

- COM_STMT_PREPARE of KILL ? / KILL QUERY <id>: executed by the proxy, with
  the proxy's ids: a session of the same user is killed (as directly on the
  server), a backend thread id given by an attacker kills nothing;
- PREPARE ... FROM 'KILL ...', FROM @variable holding one, EXECUTE IMMEDIATE
  'KILL ...', a procedure whose body kills: refused with 1295 for every
  account, privileged ones included, and nothing is killed;
- a prepared SELECT CONNECTION_ID() answers the proxy session's id (the id
  KILL takes), not the id of whichever backend thread served it.
"""
import struct
import unittest

import pymysql
from pymysql.constants import COMMAND

from . import sptest

DBA_USER, DBA_PASSWORD = "dba", "dba_pw"
UNSUPPORTED_PS = 1295
LONGLONG, UNSIGNED_FLAG = 0x08, 0x80


def read_definitions(conn, count):
    for _ in range(count + 1):  # definitions, then their EOF
        conn._read_packet()


def prepare(conn, sql):
    """COM_STMT_PREPARE; returns (statement id, columns, params). A server ERR raises."""
    conn._execute_command(COMMAND.COM_STMT_PREPARE, sql)
    ok = conn._read_packet().get_all_data()
    assert ok[:1] == b"\x00", ok
    stmt_id, columns, params = struct.unpack("<IHH", ok[1:9])
    if params:
        read_definitions(conn, params)
    if columns:
        read_definitions(conn, columns)
    return stmt_id, columns, params


def execute(conn, stmt_id, values=()):
    """COM_STMT_EXECUTE with unsigned BIGINT parameters; returns the OK packet
    or the binary rows (each the raw packet). A server ERR raises."""
    payload = struct.pack("<IBI", stmt_id, 0, 1)
    if values:
        payload += b"\x00" * ((len(values) + 7) // 8) + b"\x01"
        payload += b"".join(struct.pack("<BB", LONGLONG, UNSIGNED_FLAG) for _ in values)
        payload += b"".join(struct.pack("<Q", v) for v in values)
    conn._execute_command(COMMAND.COM_STMT_EXECUTE, payload)
    first = conn._read_packet().get_all_data()
    if first[:1] == b"\x00":
        return first
    read_definitions(conn, first[0])
    rows = []
    while True:
        data = conn._read_packet().get_all_data()
        if data[:1] == b"\xfe" and len(data) < 9:
            return rows
        rows.append(data)


def close_statement(conn, stmt_id):
    conn._execute_command(COMMAND.COM_STMT_CLOSE, struct.pack("<I", stmt_id))


def error_of(fn):
    try:
        fn()
    except pymysql.err.MySQLError as e:
        return e.args[0]
    return None


def alive(conn):
    try:
        return sptest.scalar(conn, "SELECT 'alive'") == "alive"
    except pymysql.err.MySQLError:
        return False


class PreparedKill(unittest.TestCase):
    def pinned_victim(self):
        """A proxy session in a transaction (its backend connection is its own
        until COMMIT) and the server thread id of that backend connection, as
        any client can read it (CONNECTION_ID() inside an expression is the
        server's)."""
        victim = sptest.proxy()
        sptest.query(victim, "BEGIN")
        backend_thread = int(sptest.scalar(victim, "SELECT CONNECTION_ID() + 0"))
        return victim, backend_thread

    def assert_victim_untouched(self, victim, backend_thread):
        self.assertEqual(int(sptest.scalar(victim, "SELECT CONNECTION_ID() + 0")), backend_thread)
        sptest.query(victim, "COMMIT")
        self.assertTrue(alive(victim))

    def test_prepared_kill_with_a_backend_thread_id_kills_nothing(self):
        victim, backend_thread = self.pinned_victim()
        attacker = sptest.proxy()
        try:
            stmt, _, params = prepare(attacker, "KILL ?")
            self.assertEqual(params, 1)
            # 1094 unless a proxy session happens to have that number: either
            # way the victim's backend connection must be left alone.
            error_of(lambda: execute(attacker, stmt, [backend_thread]))
            stmt2, _, _ = prepare(attacker, f"KILL QUERY {backend_thread}")
            error_of(lambda: execute(attacker, stmt2))
            self.assert_victim_untouched(victim, backend_thread)
            self.assertTrue(alive(attacker))
        finally:
            victim.close()
            attacker.close()

    def kill_own_session(self, connect):
        """Prepared KILL ? of another connection of the same account: what the client sees."""
        victim, killer = connect(), connect()
        try:
            stmt, _, _ = prepare(killer, "KILL ?")
            err = error_of(lambda: execute(killer, stmt, [victim.thread_id()]))
            return err, alive(victim), alive(killer)
        finally:
            for c in (victim, killer):
                try:
                    c.close()
                except Exception:
                    pass

    def test_prepared_kill_of_a_session_of_the_same_user_as_on_the_server(self):
        direct = self.kill_own_session(sptest.direct)
        through = self.kill_own_session(sptest.proxy)
        self.assertEqual(direct, (None, False, True))
        self.assertEqual(through, direct)

    def test_prepared_kill_query_of_an_idle_session_as_on_the_server(self):
        for connect in (sptest.direct, sptest.proxy):
            victim, killer = connect(), connect()
            try:
                stmt, _, _ = prepare(killer, f"KILL QUERY {victim.thread_id()}")
                self.assertIsNone(error_of(lambda: execute(killer, stmt)))
                self.assertTrue(alive(victim))
            finally:
                victim.close()
                killer.close()

    def test_prepared_connection_id_is_the_proxy_sessions(self):
        conn = sptest.proxy()
        try:
            sptest.query(conn, "BEGIN")  # a backend connection whose thread id differs
            stmt, columns, _ = prepare(conn, "SELECT CONNECTION_ID()")
            self.assertEqual(columns, 1)
            rows = execute(conn, stmt)
            self.assertEqual(len(rows), 1)
            # A binary row: header 0x00, NULL bitmap (1 byte), then the INT value.
            self.assertEqual(struct.unpack("<I", rows[0][2:6])[0], conn.thread_id())
            close_statement(conn, stmt)
            sptest.query(conn, "COMMIT")
        finally:
            conn.close()

    def refused_for_everyone(self, statements):
        for user, password in (("app", "app_pw"), (DBA_USER, DBA_PASSWORD)):
            victim, backend_thread = self.pinned_victim()
            conn = sptest.proxy(user=user, password=password)
            try:
                for sql in statements(backend_thread):
                    self.assertEqual(error_of(lambda: sptest.query(conn, sql)), UNSUPPORTED_PS, (user, sql))
                self.assert_victim_untouched(victim, backend_thread)
            finally:
                victim.close()
                conn.close()

    def test_sql_prepare_and_execute_immediate_of_kill_are_refused(self):
        self.refused_for_everyone(lambda t: [f"PREPARE s FROM 'KILL {t}'",
                                             f"PREPARE s FROM 'KILL QUERY {t}'",
                                             f"EXECUTE IMMEDIATE 'KILL {t}'",
                                             f"/* x */ execute immediate 'kill connection {t}'"])

    def test_kill_in_a_stored_program_is_refused(self):
        self.refused_for_everyone(lambda t: [f"CREATE PROCEDURE it_kill_{t}() KILL {t}",
                                             f"CREATE PROCEDURE it_kill_{t}() BEGIN SELECT 1; KILL QUERY {t}; END"])

    def test_prepare_from_a_variable_holding_kill_is_refused_for_privileged_accounts(self):
        # Application accounts cannot PREPARE FROM @variable at all (the
        # statement policy cannot check it); a privileged one can, and the
        # proxy reads the variable's value first.
        victim, backend_thread = self.pinned_victim()
        dba = sptest.proxy(user=DBA_USER, password=DBA_PASSWORD)
        try:
            sptest.query(dba, f"SET @q = 'KILL {backend_thread}'")
            self.assertEqual(error_of(lambda: sptest.query(dba, "PREPARE s FROM @q")), UNSUPPORTED_PS)
            # In one packet with the SET: checked after the SET ran.
            dba2 = sptest.proxy(user=DBA_USER, password=DBA_PASSWORD,
                                client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS)
            try:
                def run_packet():
                    with dba2.cursor() as cur:
                        cur.execute(f"SET @k = 'KILL {backend_thread}'; PREPARE s2 FROM @k; EXECUTE s2")
                        while cur.nextset():
                            pass
                err = error_of(run_packet)
                self.assertEqual(err, UNSUPPORTED_PS)
            finally:
                dba2.close()
            # An ordinary statement from a variable still prepares.
            sptest.query(dba, "SET @r = 'SELECT 1'")
            sptest.query(dba, "PREPARE r FROM @r")
            self.assertEqual(sptest.scalar(dba, "EXECUTE r"), 1)
            self.assert_victim_untouched(victim, backend_thread)
        finally:
            victim.close()
            dba.close()


if __name__ == "__main__":
    unittest.main()
