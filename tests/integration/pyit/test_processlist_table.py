"""information_schema.PROCESSLIST through the proxy (issue 30): for an
application user it lists the proxy's sessions, as the logical SHOW
PROCESSLIST does (the user's own sessions, with the ids the handshake gave
and KILL takes), under the server's own column definitions; any WHERE,
ORDER BY and function keeps MariaDB's meaning, CONNECTION_ID() is the
client's id. DBA accounts keep the server's threads.
"""
import struct
import threading
import time
import unittest

import pymysql
from pymysql.constants import COMMAND

from pyit import sptest

DBA_USER, DBA_PASSWORD = "dba", "dba_pw"
HASHED_USER, HASHED_PASSWORD = "hashed", "hashed_pw"
OWN = "SELECT ID, USER, DB, COMMAND FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()"


def lenenc(data, at):
    first = data[at]
    if first < 0xFB:
        return first, at + 1
    size = {0xFC: 2, 0xFD: 3, 0xFE: 8}[first]
    return int.from_bytes(data[at + 1:at + 1 + size], "little"), at + 1 + size


def lenenc_bytes(value):
    assert len(value) < 0xFB
    return bytes([len(value)]) + value


def prepared_ids(conn, sql, user):
    """COM_STMT_PREPARE of `sql` (one string parameter, first column a BIGINT
    ID), executed with `user`: the IDs of the binary rows."""
    conn._execute_command(COMMAND.COM_STMT_PREPARE, sql)
    ok = conn._read_packet().get_all_data()
    stmt_id, columns, params = struct.unpack("<IHH", ok[1:9])
    assert params == 1, params
    for _ in range(params + 1 + columns + (1 if columns else 0)):
        conn._read_packet()
    execute = struct.pack("<IBI", stmt_id, 0, 1) + b"\x00" + b"\x01" + b"\xfe\x00" + lenenc_bytes(user.encode())
    conn._execute_command(COMMAND.COM_STMT_EXECUTE, execute)
    first = conn._read_packet().get_all_data()
    count, _ = lenenc(first, 0)
    for _ in range(count + 1):
        conn._read_packet()
    ids = []
    null_bitmap = (count + 7 + 2) // 8
    while True:
        row = conn._read_packet().get_all_data()
        if row[:1] == b"\xfe" and len(row) < 9:
            break
        ids.append(struct.unpack("<q", row[1 + null_bitmap:1 + null_bitmap + 8])[0])
    conn._execute_command(COMMAND.COM_STMT_CLOSE, struct.pack("<I", stmt_id))
    return ids


def described(conn, sql):
    """Column name, type code, length and flags of each result column. INFO's
    length is left out: the server's is 65,535 characters of a LONGTEXT,
    which no table column can declare (the copy's is LONGTEXT's own)."""
    with conn.cursor() as cur:
        cur.execute(sql)
        cur.fetchall()
        return [(f.name, f.type_code, None if f.name == "INFO" else f.length, f.flags & 0xFFFF)
                for f in cur._result.fields]


class ProcesslistTable(unittest.TestCase):
    def test_own_connection_id_and_columns_as_the_server(self):
        with sptest.proxy() as p:
            own = p.thread_id()  # the id the greeting gave
            self.assertEqual(sptest.scalar(p, "SELECT CONNECTION_ID()"), own)
            rows = sptest.query(p, OWN)
            self.assertEqual(rows, ((own, sptest.APP_USER, sptest.DATABASE, "Query"),))
            # Any case, backquotes, an alias, a qualified column.
            rows = sptest.query(p, "select p.id from `INFORMATION_SCHEMA`.`processlist` p where p.id = connection_id()")
            self.assertEqual(rows, ((own,),))
            proxy_columns = described(p, "SELECT * FROM information_schema.PROCESSLIST")
        with sptest.direct(sptest.DB0_PORT) as d:
            server_columns = described(d, "SELECT * FROM information_schema.PROCESSLIST")
        self.assertEqual(proxy_columns, server_columns)

    def test_other_sessions_of_the_user_and_kill(self):
        a, b = sptest.proxy(), sptest.proxy()
        other_user = sptest.proxy(user=HASHED_USER, password=HASHED_PASSWORD)
        try:
            a_id, b_id = a.thread_id(), b.thread_id()
            outcome = []

            def sleep():
                try:
                    outcome.append(sptest.query(b, "SELECT SLEEP(5) AS it_pl_table_sleep"))
                except pymysql.err.MySQLError as e:
                    outcome.append(e.args[0])

            sleeper = threading.Thread(target=sleep)
            sleeper.start()
            try:
                found = ()
                deadline = time.time() + 10
                while not found and time.time() < deadline:
                    found = sptest.query(a, "SELECT ID, INFO FROM information_schema.PROCESSLIST "
                                            "WHERE INFO LIKE '%it_pl_table_sleep' AND ID <> CONNECTION_ID()")
                    time.sleep(0.05)
                self.assertEqual(found, ((b_id, "SELECT SLEEP(5) AS it_pl_table_sleep"),))
                ids = {r[0] for r in sptest.query(a, "SELECT ID FROM information_schema.PROCESSLIST ORDER BY ID")}
                self.assertTrue({a_id, b_id} <= ids, ids)
                # Another user's sessions are not listed, as in SHOW PROCESSLIST.
                self.assertNotIn(other_user.thread_id(), ids)
                other_sees = {r[0] for r in sptest.query(other_user, "SELECT ID FROM information_schema.PROCESSLIST")}
                self.assertEqual(other_sees, {other_user.thread_id()})
                # The server takes `PROCESSLİST` (U+0130) for the table too: the
                # proxy's sessions again, never a backend's threads.
                dotted = {r[0] for r in sptest.query(other_user, "SELECT ID FROM information_schema.PROCESSL\u0130ST")}
                self.assertEqual(dotted, {other_user.thread_id()})
                # Prepared with a parameter: the same rows.
                self.assertEqual(prepared_ids(a, "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ? ORDER BY ID",
                                              sptest.APP_USER), sorted(ids))
                # The id read there is the one KILL takes.
                started = time.time()
                sptest.query(a, f"KILL QUERY {found[0][0]}")
            finally:
                sleeper.join(timeout=20)
            self.assertLess(time.time() - started, 4, "KILL QUERY of the listed id interrupted the sleep")
            self.assertIn(outcome[0], (1317, ((1,),)))
            sptest.query(a, f"KILL {b_id}")
            sptest.wait_until(lambda: not sptest.query(a, f"SELECT ID FROM information_schema.PROCESSLIST WHERE ID = {b_id}"),
                              5, what="the killed session gone from the list")
            # Nothing stays on the session: no pin, no temporary table left behind.
            self.assertEqual(sptest.query(a, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()"),
                             ((1,),))
        finally:
            a.close()
            b.close()
            other_user.close()

    def test_sql_prepare_is_refused_and_dba_keeps_the_servers_threads(self):
        with sptest.proxy() as p:
            with self.assertRaises(pymysql.err.MySQLError) as raised:
                sptest.query(p, f"PREPARE it_pl FROM '{OWN}'")
            self.assertEqual(raised.exception.args[0], 1235)
        with sptest.proxy(user=DBA_USER, password=DBA_PASSWORD) as dba:
            users = {r[0] for r in sptest.query(dba, "SELECT USER FROM information_schema.PROCESSLIST")}
        self.assertIn(sptest.BACKEND_USER, users, "the server's threads, as the backend account sees them")


if __name__ == "__main__":
    unittest.main(verbosity=2)
