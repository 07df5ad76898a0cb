"""One rule set for both protocols (issue 30): every statement kind the
session intercepts, checks or rewrites in COM_QUERY gets the same outcome
prepared with COM_STMT_PREPARE + COM_STMT_EXECUTE: the same error (code and
message), or OK, or a result with the same column names and row count.

Where the server itself answers the two protocols differently (a statement
it cannot prepare), the prepared outcome through the proxy is compared with
the prepared outcome directly on the server instead.
"""
import struct
import unittest

import pymysql
from pymysql.constants import COMMAND

from . import sptest

HASHED_USER, HASHED_PASSWORD = "hashed", "hashed_pw"  # no DDL, no physical tables
LIMITED_USER, LIMITED_PASSWORD = "limited", "limited_pw"  # allow lists


def lenenc(data, at):
    first = data[at]
    if first < 0xFB:
        return first, at + 1
    size = {0xFC: 2, 0xFD: 3, 0xFE: 8}[first]
    return int.from_bytes(data[at + 1:at + 1 + size], "little"), at + 1 + size


def column_name(definition):
    at = 0
    for _ in range(4):  # catalog, schema, table, org_table
        size, at = lenenc(definition, at)
        at += size
    size, at = lenenc(definition, at)
    return definition[at:at + size].decode()


def is_eof(packet):
    return packet[:1] == b"\xfe" and len(packet) < 9


def text_outcome(conn, sql):
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            if cur.description is None:
                return ("ok",)
            return ("rows", tuple(c[0] for c in cur.description), len(cur.fetchall()))
    except pymysql.err.MySQLError as e:
        return ("err", e.args[0], e.args[1])


def prepared_outcome(conn, sql):
    """COM_STMT_PREPARE, then COM_STMT_EXECUTE without parameters: the
    outcome as text_outcome gives it (a prepare error is the outcome)."""
    try:
        conn._execute_command(COMMAND.COM_STMT_PREPARE, sql)
        ok = conn._read_packet().get_all_data()
    except pymysql.err.MySQLError as e:
        return ("err", e.args[0], e.args[1])
    stmt_id, columns, params = struct.unpack("<IHH", ok[1:9])
    for _ in range(params + (1 if params else 0) + columns + (1 if columns else 0)):
        conn._read_packet()
    try:
        conn._execute_command(COMMAND.COM_STMT_EXECUTE, struct.pack("<IBI", stmt_id, 0, 1))
        first = conn._read_packet().get_all_data()
        if first[:1] == b"\x00":
            return ("ok",)
        count, _ = lenenc(first, 0)
        names = tuple(column_name(conn._read_packet().get_all_data()) for _ in range(count))
        if is_eof(conn._read_packet().get_all_data()) is False:
            raise AssertionError("no EOF after the column definitions")
        rows = 0
        while not is_eof(conn._read_packet().get_all_data()):
            rows += 1
        return ("rows", names, rows)
    except pymysql.err.MySQLError as e:
        return ("err", e.args[0], e.args[1])
    finally:
        conn._execute_command(COMMAND.COM_STMT_CLOSE, struct.pack("<I", stmt_id))


class BothProtocols(unittest.TestCase):
    # (user, password, statement): each an interception of the text path.
    CASES = [
        # KILL and CONNECTION_ID(): carried out by the proxy with its own ids.
        (sptest.APP_USER, sptest.APP_PASSWORD, "KILL 4000000000"),
        (sptest.APP_USER, sptest.APP_PASSWORD, "KILL QUERY 4000000001"),
        (sptest.APP_USER, sptest.APP_PASSWORD, "SELECT CONNECTION_ID()"),
        # The statement policy: DDL without allow_ddl, physical tables, administration.
        (HASHED_USER, HASHED_PASSWORD, "CREATE TABLE it_both_ddl (a INT)"),
        (HASHED_USER, HASHED_PASSWORD, "SELECT * FROM msg_00 LIMIT 1"),
        (HASHED_USER, HASHED_PASSWORD, "SET GLOBAL max_connections = 10"),
        # Allow lists.
        (LIMITED_USER, LIMITED_PASSWORD, "SELECT * FROM conv LIMIT 1"),
        (LIMITED_USER, LIMITED_PASSWORD, "SELECT * FROM mysql.user"),
        # The logical catalog.
        (sptest.APP_USER, sptest.APP_PASSWORD, "SHOW TABLES"),
        (sptest.APP_USER, sptest.APP_PASSWORD, "SHOW COLUMNS FROM msg"),
        (sptest.APP_USER, sptest.APP_PASSWORD,
         "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'im' AND TABLE_NAME LIKE 'msg%'"),
        # Routing: one shard, all shards, refused shapes.
        (sptest.APP_USER, sptest.APP_PASSWORD, "SELECT conv_id FROM msg WHERE conv_id = 7"),
        (sptest.APP_USER, sptest.APP_PASSWORD, "SELECT COUNT(*) FROM msg"),
        (sptest.APP_USER, sptest.APP_PASSWORD, "UPDATE msg SET status = 1"),
        # Session settings the proxy answers or carries.
        (sptest.APP_USER, sptest.APP_PASSWORD, "SET @@session.shardproxy_reads = 'primary'"),
        (sptest.APP_USER, sptest.APP_PASSWORD, "SET @@session.shardproxy_reads = 'nowhere'"),
        (sptest.APP_USER, sptest.APP_PASSWORD, "SET SESSION sql_mode = 'ANSI_QUOTES'"),
        # The session's own diagnostics area and process list.
        (sptest.APP_USER, sptest.APP_PASSWORD, "SHOW WARNINGS"),
        (sptest.APP_USER, sptest.APP_PASSWORD, "SHOW COUNT(*) ERRORS"),
        (sptest.APP_USER, sptest.APP_PASSWORD, "SHOW PROCESSLIST"),
        (sptest.APP_USER, sptest.APP_PASSWORD,
         "SELECT ID, USER, COMMAND FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()"),
        (sptest.APP_USER, sptest.APP_PASSWORD, "GET DIAGNOSTICS CONDITION 9 @it_both = MESSAGE_TEXT"),
    ]

    def test_every_interception_answers_the_same_both_ways(self):
        differences = []
        for user, password, sql in self.CASES:
            with sptest.proxy(user=user, password=password) as text_conn:
                text = text_outcome(text_conn, sql)
            with sptest.proxy(user=user, password=password) as prepared_conn:
                prepared = prepared_outcome(prepared_conn, sql)
            if text != prepared:
                differences.append(f"{user}: {sql}\n  text:     {text}\n  prepared: {prepared}")
        self.assertEqual(differences, [], "\n" + "\n".join(differences))

    def test_what_the_server_cannot_prepare_is_refused_as_the_server_refuses_it(self):
        for sql in ("USE im", "SHOW SLAVE STATUS NONSENSE"):
            with sptest.direct(sptest.DB0_PORT) as d:
                direct = prepared_outcome(d, sql)
            with sptest.proxy() as p:
                through = prepared_outcome(p, sql)
            self.assertEqual(through[:2], direct[:2], sql)


if __name__ == "__main__":
    unittest.main(verbosity=2)
