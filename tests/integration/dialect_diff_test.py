#!/usr/bin/python3
"""Dialect differential test (issue 13): the same statements, sent as raw
bytes, under each sql_mode, each client charset and each comment form,
through shardproxy (sharded msg_00..msg_15 on two backends) and on one
unsharded MariaDB holding the same rows (database im_dialect_ref on backend
db0: the mirror). Every statement must give the mirror's answer (rows as
bytes, column names, affected rows; for errors the error number), or a
clear refusal by the proxy (9100-9121, 1235). Writes are checked on the
backends: every row the mirror holds is in the physical table its stored
conv_id computes (conv_id % 16, shards 0-7 on db0, 8-15 on db1), with the
same content, and nowhere else.

Also: sql_mode set by SET sql_mode, by SET STATEMENT ... FOR, by a procedure
(MariaDB restores the caller's mode when it returns) and inherited from a
global default (a proxy started after SET GLOBAL); multi-statement packets
(results, affected rows and SERVER_MORE_RESULTS_EXIST per result compared
with the mirror); table names (schema-qualified, quoted, letter case under
lower_case_table_names=0, another schema's msg).

Environment (ctest, see CMakeLists.txt):
  SP_PROXY_PORT SP_DB0_PORT SP_DB1_PORT SP_DIALECT_CONFIG (the test proxy's
  config, copied for the proxy of the global-default case) SP_PROXY_BINARY
  SP_DIALECT_RUN_DIR  SP_DIALECT_VERBOSE=1 prints every statement's outcome.
Prints the number of statements run per part and their outcomes; fails
(exit 1) on any difference.
"""
import os
import re
import signal
import subprocess
import sys
import time

import pymysql
from pymysql.constants import CLIENT

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from free_ports import free_ports  # noqa: E402

PROXY_PORT = int(os.environ.get("SP_PROXY_PORT", "16033"))
DB_PORTS = [int(os.environ.get("SP_DB0_PORT", "3307")), int(os.environ.get("SP_DB1_PORT", "3308"))]
CONFIG = os.environ.get("SP_DIALECT_CONFIG", "")
BINARY = os.environ.get("SP_PROXY_BINARY", os.path.join(HERE, "..", "..", "build", "proxy", "shardproxy"))
RUN_DIR = os.environ.get("SP_DIALECT_RUN_DIR", os.path.join(HERE, "..", "..", "build", "dialect-run"))
VERBOSE = os.environ.get("SP_DIALECT_VERBOSE") == "1"
MIRROR_DB = "im_dialect_ref"
OTHER_DB = "im_dialect_other"
REFUSALS = set(range(9100, 9122)) | {1235}

MODES = {
    "default": None,  # the server's default, never SET
    "NO_BACKSLASH_ESCAPES": "NO_BACKSLASH_ESCAPES",
    "ANSI_QUOTES": "ANSI_QUOTES",
    "PIPES_AS_CONCAT": "PIPES_AS_CONCAT",
    "IGNORE_SPACE": "IGNORE_SPACE",
    "HIGH_NOT_PRECEDENCE": "HIGH_NOT_PRECEDENCE",
    "ANSI": "ANSI",
    "combination": "NO_BACKSLASH_ESCAPES,ANSI_QUOTES,PIPES_AS_CONCAT,HIGH_NOT_PRECEDENCE,STRICT_ALL_TABLES",
}
# (name, how the session chooses it): handshake collation or SET NAMES / SET CHARACTER SET.
CHARSETS = [("gbk", "handshake"), ("big5", "names"), ("sjis", "handshake"), ("cp932", "names"),
            ("gb18030", "names"), ("utf8mb3", "charset"), ("utf8mb4", "handshake"), ("latin1", "names"),
            ("binary", "names")]
PYMYSQL_NAME = {"utf8mb3": "utf8"}

# Conversations of the data set: 12934 -> msg_06 (db0), 549 -> msg_05 (db0),
# 12935 -> msg_07 (db0), 12941 -> msg_13 (db1).
BASE_ROWS = {12934: 300, 549: 40, 12935: 7, 12941: 5}


# ---------------------------------------------------------------- charsets
def mb_length(cs, data, i):
    """Length of the multi-byte character at data[i] as MariaDB's my_ismbchar (0: none)."""
    b = data[i]
    nxt = data[i + 1] if i + 1 < len(data) else None
    if cs == "gbk":
        return 2 if 0x81 <= b <= 0xFE and nxt is not None and (0x40 <= nxt <= 0x7E or 0x80 <= nxt <= 0xFE) else 0
    if cs == "big5":
        return 2 if 0xA1 <= b <= 0xF9 and nxt is not None and (0x40 <= nxt <= 0x7E or 0xA1 <= nxt <= 0xFE) else 0
    if cs in ("sjis", "cp932"):
        lead = 0x81 <= b <= 0x9F or 0xE0 <= b <= 0xFC
        return 2 if lead and nxt is not None and (0x40 <= nxt <= 0x7E or 0x80 <= nxt <= 0xFC) else 0
    if cs in ("utf8mb3", "utf8mb4") and b >= 0xC2:
        n = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
        if i + n <= len(data) and all(0x80 <= c <= 0xBF for c in data[i + 1:i + n]):
            return n
    return 0


def mb_lead(cs, b):
    """The byte starts a multi-byte character of cs (my_mbcharlen > 1)."""
    if cs == "gbk":
        return 0x81 <= b <= 0xFE
    if cs == "big5":
        return 0xA1 <= b <= 0xF9
    if cs in ("sjis", "cp932"):
        return 0x81 <= b <= 0x9F or 0xE0 <= b <= 0xFC
    if cs in ("utf8mb3", "utf8mb4"):
        return b >= 0xC2
    return False


def escape(value, cs, no_backslash_escapes):
    """libmariadb's mysql_real_escape_string for the session's charset and
    NO_BACKSLASH_ESCAPES (escape_string_for_mysql / escape_quotes_for_mysql)."""
    out = bytearray()
    i = 0
    while i < len(value):
        n = mb_length(cs, value, i)
        if n > 1:
            out += value[i:i + n]
            i += n
            continue
        b = value[i]
        if no_backslash_escapes:
            out += b"''" if b == 0x27 else bytes([b])
        elif mb_lead(cs, b):
            out += b"\\" + bytes([b])  # an invalid multi-byte start is escaped, as the client library does
        else:
            out += {0: b"\\0", 0x0A: b"\\n", 0x0D: b"\\r", 0x1A: b"\\Z", 0x27: b"\\'", 0x22: b'\\"',
                    0x5C: b"\\\\"}.get(b, bytes([b]))
        i += 1
    return bytes(out)


def hostile_values(cs):
    """Values an application would escape, holding 0x5C, 0x27, 0x22 inside or after multi-byte characters."""
    common = [b"a'b", b'a"b', b"a\\b", b"\\'", b"x' OR conv_id = 549 -- "]
    trail_5c = {"gbk": b"\x95\x5c", "big5": b"\xa5\x5c", "sjis": b"\x83\x5c", "cp932": b"\x83\x5c",
                "gb18030": b"\x95\x5c"}.get(cs)
    lead = {"gbk": 0x95, "big5": 0xA5, "sjis": 0x83, "cp932": 0x83, "gb18030": 0x95}.get(cs)
    per = []
    if trail_5c:
        per = [trail_5c, trail_5c + b"'", bytes([lead, 0x27]), bytes([lead, 0x22]), b"x" + bytes([lead])]
    elif cs in ("utf8mb3", "utf8mb4"):
        per = ["中\\".encode(), "é'".encode(), '"中"'.encode()]
    elif cs == "latin1":
        per = [b"\xe9\\", b"\xa0'", b'\xff"']
    elif cs == "binary":
        per = [b"\x95\x5c", b"\x00'", b'\x83"']
    return common + per


# ---------------------------------------------------------------- sessions
def outcome(conn, sql):
    """Each result of the statement(s) in order: ('ok', names, rows, affected, more_results_flag), or
    ('err', errno, message) for the error that ended them."""
    results = []
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            while True:
                names = tuple(d[0] for d in (cur.description or []))
                more = bool(conn._result.has_next) if conn._result else None
                results.append(("ok", names, tuple(cur.fetchall()), None if names else cur.rowcount, more))
                if not cur.nextset():
                    break
    except pymysql.err.MySQLError as e:
        code = e.args[0] if e.args and isinstance(e.args[0], int) else -1
        results.append(("err", code, str(e.args[1] if len(e.args) > 1 else e)))
    return tuple(results)


def connect(port, user, password, database, charset="utf8mb4", multi=False):
    conn = pymysql.connect(host="127.0.0.1", port=port, user=user, password=password, database=database,
                           charset=PYMYSQL_NAME.get(charset, charset), autocommit=True, connect_timeout=10,
                           read_timeout=60, binary_prefix=False,
                           client_flag=CLIENT.MULTI_STATEMENTS if multi else 0)
    conn.encoding = "iso-8859-1"  # names and text as raw bytes (pymysql's "latin1" is cp1252)
    return conn


class Pair:
    """A session through the proxy and one on the mirror, in the same charset and mode."""

    def __init__(self, charset="utf8mb4", how="handshake", mode=None, multi=False, proxy_port=None):
        hand = charset if how == "handshake" else "utf8mb4"
        self.proxy = connect(proxy_port or PROXY_PORT, "app", "app_pw", "im", hand, multi)
        self.mirror = connect(DB_PORTS[0], "root", "root_pw", MIRROR_DB, hand, multi)
        self.setup = []
        if how != "handshake":
            verb = "SET CHARACTER SET " if how == "charset" else "SET NAMES "
            self.setup.append((verb + charset).encode())
        if how != "handshake" or charset != "utf8mb4":
            self.setup.append(b"SET character_set_results = binary")
        if mode is not None:
            self.setup.append(("SET sql_mode = '%s'" % mode).encode())
        self.setup_outcomes = [self.both(s, count=False) for s in self.setup]

    def both(self, sql, count=True):
        p = outcome(self.proxy, sql.replace(b"{db}", b"im"))
        m = outcome(self.mirror, sql.replace(b"{db}", MIRROR_DB.encode()))
        return p, m

    def close(self):
        self.proxy.close()
        self.mirror.close()


class Tally:
    def __init__(self):
        self.same = self.refused = 0
        self.diffs = []
        self.by_part = {}

    def check(self, part, context, sql, p, m):
        self.by_part.setdefault(part, [0, 0, 0])
        verdict = compare(p, m)
        if verdict == "same":
            self.same += 1
            self.by_part[part][0] += 1
        elif verdict == "refused":
            self.refused += 1
            self.by_part[part][1] += 1
        else:
            self.by_part[part][2] += 1
            self.diffs.append((part, context, sql, p, m))
        if VERBOSE:
            print(f"[{verdict}] {part} {context} {sql!r}: proxy {p!r} mirror {m!r}")
        return verdict


def compare(p, m):
    if len(p) == len(m) and all(a == b or (a[0] == b[0] == "err" and a[1] == b[1]) for a, b in zip(p, m)):
        return "same"  # error messages name the database, which differs (im / im_dialect_ref)
    if p and p[-1][0] == "err" and p[-1][1] in REFUSALS and len(p) <= len(m) and all(
            a == b for a, b in zip(p[:-1], m)):
        return "refused"  # results before the refusal must still be the mirror's
    return "different"


# ---------------------------------------------------------------- statements
def comment_statements():
    """(label, sql): every comment form, each where reading it differently changes the key or the answer."""
    c = "SELECT COUNT(*) FROM msg WHERE conv_id = "
    return [
        ("issue: /*!80000 skipped", c + "/*!80000 549 AND conv_id = */ 12934"),
        ("/*!50700 skipped", c + "/*!50700 549 AND conv_id = */ 12934"),
        ("/*!99999 skipped", c + "/*!99999 549 AND conv_id = */ 12934"),
        ("/*!50699 executed", c + "/*!50699 549 OR conv_id = */ 12934"),
        ("/*!40101 executed", c + "/*!40101 549 OR conv_id = */ 12934"),
        ("/*! executed", c + "/*! 549 AND conv_id = */ 549"),
        ("/*!100000 executed", c + "/*!100000 549 AND conv_id = */ 549"),
        ("/*!101119 executed", c + "/*!101119 549 AND conv_id = */ 549"),
        ("/*!101120 not executed", c + "/*!101120 549 AND conv_id = */ 12934"),
        ("/*!999999 not executed", c + "/*!999999 549 AND conv_id = */ 12934"),
        ("/*M!100000 executed", c + "/*M!100000 549 AND conv_id = */ 549"),
        ("/*M!999999 not executed", c + "/*M!999999 549 AND conv_id = */ 12934"),
        ("/*M! executed", c + "/*M! 549 AND conv_id = */ 549"),
        ("/*+ hint is a comment", c + "/*+ 549 AND conv_id = */ 12934"),
        ("/*+ hint after SELECT", "SELECT /*+ MAX_EXECUTION_TIME(1000) */ COUNT(*) FROM msg WHERE conv_id = 549"),
        ("-- with space", c + "12934 -- OR conv_id = 549"),
        ("--1 is minus minus", c + "12936 --1"),
        ("--tab is a comment", c + "12934 --\tOR conv_id = 549"),
        ("-- newline", c + "12934 --\nOR conv_id = 549"),
        ("# comment", c + "12934 # OR conv_id = 549\n"),
        ("# then newline", c + "549 #\n AND conv_id = 549"),
        ("/* */ plain", c + "/* 549 AND conv_id = */ 12934"),
        ("nested /*! in /* */", c + "/*!40101 /* 549 AND conv_id = */ 12934 */"),
        ("version comment in string", "SELECT COUNT(*) FROM msg WHERE conv_id = 12934 AND content <> '/*!40101 x */'"),
    ]


def mode_statements():
    """Statements that read differently under one of the modes."""
    return [
        ("backslash in string", "SELECT COUNT(*) FROM msg WHERE conv_id = 12934 AND content <> 'a\\' OR conv_id = 549 -- '"),
        ("backslash quote key", "SELECT COUNT(*) FROM msg WHERE content <> 'x\\' AND conv_id = 549 OR conv_id = 12941 -- ' AND conv_id = 12934"),
        ("double quotes", "SELECT COUNT(*) FROM msg WHERE \"conv_id\" = 549"),
        ("double quotes key", "SELECT COUNT(*) FROM msg WHERE conv_id = 12934 AND \"conv_id\" = \"conv_id\""),
        ("double quoted table", "SELECT COUNT(*) FROM \"msg\" WHERE conv_id = 549"),
        ("pipes", "SELECT COUNT(*) FROM msg WHERE conv_id = 549 || conv_id = 12934"),
        ("pipes in select", "SELECT 'a' || 'b' FROM msg WHERE conv_id = 549 LIMIT 1"),
        ("function space", "SELECT COUNT(*) FROM msg WHERE conv_id = ABS (549)"),
        ("count space", "SELECT COUNT (*) FROM msg WHERE conv_id = 549"),
        ("not precedence", "SELECT COUNT(*) FROM msg WHERE conv_id = 549 AND NOT 1 BETWEEN 2 AND 3"),
        ("not key", "SELECT COUNT(*) FROM msg WHERE NOT conv_id <> 12934 AND conv_id = 12934"),
        ("backquoted", "SELECT COUNT(*) FROM `msg` WHERE `conv_id` = 12941"),
    ]


def write_cycle(cs, mode_sql, nbe, values, next_id):
    """INSERT (plain and with the split-string injection), read back, DELETE: (label, sql) in order."""
    out = []
    for v in values:
        e = escape(v, cs, nbe)
        mid = next_id()
        out.append(("insert value", b"INSERT INTO msg (conv_id, seq, msg_id, sender_uid, content) VALUES (12934, %d, %d, 1, '"
                    % (mid, mid) + e + b"')"))
        out.append(("select value", b"SELECT content, HEX(content) FROM msg WHERE conv_id = 12934 AND msg_id = %d" % mid))
        out.append(("count value", b"SELECT COUNT(*) FROM msg WHERE conv_id = 12934 AND content = '" + e + b"'"))
        # Two user strings: a lexer that reads the first one's end wrongly sees
        # the second as SQL naming conv_id 549 (msg_05) instead of 12934 (msg_06).
        mid2 = next_id()
        inj = escape(b"), 1, 549, %d, %d) -- " % (mid2, mid2), cs, nbe)
        out.append(("insert injection", b"INSERT INTO msg (content, sender_uid, conv_id, seq, msg_id) VALUES (CONCAT('"
                    + e + b"', '" + inj + b"'), 1, 12934, %d, %d)" % (mid2, mid2)))
        dinj = escape(b") AND conv_id = 549 -- ", cs, nbe)
        out.append(("delete injection", b"DELETE FROM msg WHERE content = CONCAT('" + e + b"', '" + dinj
                    + b"') AND conv_id = 12934"))
        out.append(("delete value", b"DELETE FROM msg WHERE conv_id = 12934 AND msg_id IN (%d, %d)" % (mid, mid2)))
    return out


# ---------------------------------------------------------------- setup and checks
def ddl_msg():
    text = open(os.path.join(HERE, "..", "..", "scripts", "schema_ddl.sql"), encoding="utf-8").read()
    section = text.split("-- table: msg\n", 1)[1].split("\n-- table:", 1)[0]
    body = "\n".join(line for line in section.splitlines() if not line.startswith("--"))
    return body.replace("{table}", "msg").replace("{shard}", "ref").strip().rstrip(";")


def direct(port, database="im"):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="root_pw", database=database,
                           autocommit=True, connect_timeout=10, read_timeout=60)


def physical(conv):
    shard = conv % 16
    return DB_PORTS[0] if shard < 8 else DB_PORTS[1], "msg_%02d" % shard


def setup():
    db0 = direct(DB_PORTS[0], None)
    with db0.cursor() as cur:
        for db in (MIRROR_DB, OTHER_DB):
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {db} CHARACTER SET utf8mb4")
            cur.execute(f"DROP TABLE IF EXISTS {db}.msg")
            cur.execute(ddl_msg().replace("CREATE TABLE IF NOT EXISTS msg", f"CREATE TABLE {db}.msg", 1))
            cur.execute(f"DROP PROCEDURE IF EXISTS {db}.dialect_set_mode")
        # The proxy's backend account has least privilege (im.* only): the
        # other schema is the application's too here, as a DBA would grant it.
        for account in ("'proxy'@'127.0.0.1'", "'proxy'@'%'", "'proxy'@'localhost'"):
            cur.execute(f"GRANT ALL PRIVILEGES ON `{OTHER_DB}`.* TO {account}")
        cur.execute(f"INSERT INTO {OTHER_DB}.msg (conv_id, seq, msg_id, sender_uid, content) VALUES "
                    "(12934, 1, 1, 1, 'other'), (12934, 2, 2, 1, 'other')")
    db0.close()
    for conv in BASE_ROWS:
        port, table = physical(conv)
        conn = direct(port)
        with conn.cursor() as cur:
            cur.execute(f"DELETE FROM {table} WHERE conv_id = {conv}")
        conn.close()
    # Stray rows of earlier runs with this test's msg_ids (all physical tables).
    for port in DB_PORTS:
        conn = direct(port)
        with conn.cursor() as cur:
            cur.execute("SHOW TABLES LIKE 'msg\\_%'")
            for (name,) in cur.fetchall():
                cur.execute(f"DELETE FROM `{name}` WHERE msg_id >= 900000000")
        conn.close()
    proxy = connect(PROXY_PORT, "app", "app_pw", "im")
    mirror = connect(DB_PORTS[0], "root", "root_pw", MIRROR_DB)
    msg_id = 900000000
    for conv, count in BASE_ROWS.items():
        values = []
        for seq in range(1, count + 1):
            msg_id += 1
            values.append(f"({conv}, {seq}, {msg_id}, 7, 'x')")
        sql = "INSERT INTO msg (conv_id, seq, msg_id, sender_uid, content) VALUES " + ", ".join(values)
        for conn in (proxy, mirror):
            with conn.cursor() as cur:
                cur.execute(sql)
    for conn, db in ((proxy, "im"), (mirror, MIRROR_DB)):
        with conn.cursor() as cur:
            cur.execute("DROP PROCEDURE IF EXISTS dialect_set_mode")
            cur.execute("CREATE PROCEDURE dialect_set_mode() SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES,ANSI_QUOTES'")
    proxy.close()
    mirror.close()


def placement_errors():
    """Every mirror row must be in the physical table of its stored conv_id, with the same content, once."""
    errors = []
    mirror = direct(DB_PORTS[0], MIRROR_DB)
    with mirror.cursor() as cur:
        cur.execute("SELECT msg_id, conv_id, content FROM msg")
        expected = {row[0]: (row[1], bytes(row[2])) for row in cur.fetchall()}
    mirror.close()
    found = {}
    for port in DB_PORTS:
        conn = direct(port)
        with conn.cursor() as cur:
            cur.execute("SHOW TABLES LIKE 'msg\\_%'")
            for (name,) in cur.fetchall():
                if not re.fullmatch(r"msg_\d\d", name):
                    continue
                cur.execute(f"SELECT msg_id, conv_id, content FROM `{name}` WHERE msg_id >= 900000000")
                for msg_id, conv, content in cur.fetchall():
                    found.setdefault(msg_id, []).append((port, name, conv, bytes(content)))
        conn.close()
    for msg_id, (conv, content) in expected.items():
        where = found.get(msg_id, [])
        want = physical(conv)
        if [(w[0], w[1]) for w in where] != [want] or where[0][2] != conv or where[0][3] != content:
            errors.append(f"msg_id {msg_id}: mirror has conv_id {conv} content {content!r} (expected in "
                          f"{want[1]} on port {want[0]}); backends have {where}")
    for msg_id in set(found) - set(expected):
        errors.append(f"msg_id {msg_id}: on the backends {found[msg_id]} but not on the mirror")
    return errors


# ---------------------------------------------------------------- parts
def run_matrix(tally, counter):
    stats = {"modes": 0, "charsets": 0}
    for cs, how in CHARSETS:
        stats["charsets"] += 1
        for mode_name, mode in MODES.items():
            pair = Pair(cs, how, mode)
            context = f"{cs}({how})/{mode_name}"
            for s, (p, m) in zip(pair.setup, pair.setup_outcomes):
                tally.check("session setup", context, s, p, m)
            nbe = mode is not None and "NO_BACKSLASH_ESCAPES" in mode
            statements = [(label, sql.encode()) for label, sql in comment_statements() + mode_statements()]
            statements += write_cycle(cs, mode, nbe, hostile_values(cs), counter)
            for label, sql in statements:
                p, m = pair.both(sql)
                tally.check("matrix", f"{context} [{label}]", sql, p, m)
            pair.close()
        stats["modes"] = len(MODES)
    return stats


def run_mode_sources(tally, counter):
    """sql_mode chosen by SET STATEMENT ... FOR and by a procedure."""
    pair = Pair()
    for mode_name, mode in MODES.items():
        if mode is None:
            continue
        for label, sql in mode_statements() + comment_statements()[:3]:
            stmt = ("SET STATEMENT sql_mode = '%s' FOR %s" % (mode, sql)).encode()
            p, m = pair.both(stmt)
            tally.check("SET STATEMENT", mode_name + " " + label, stmt, p, m)
        mid = counter()
        stmt = ("SET STATEMENT sql_mode = '%s' FOR INSERT INTO msg (conv_id, seq, msg_id, sender_uid, content) "
                "VALUES (12941, %d, %d, 1, 'a\\\\')" % (mode, mid, mid)).encode()
        p, m = pair.both(stmt)
        tally.check("SET STATEMENT", mode_name + " insert", stmt, p, m)
    # A procedure setting sql_mode: MariaDB restores the caller's mode on return.
    for s in (b"CALL dialect_set_mode()", b"SELECT @@sql_mode") + tuple(
            sql.encode() for _, sql in mode_statements()):
        p, m = pair.both(s)
        tally.check("procedure", "after CALL", s, p, m)
    pair.close()


def run_global_default(tally):
    """A proxy started after SET GLOBAL sql_mode: sessions inherit the global default."""
    if not CONFIG:
        raise SystemExit("SP_DIALECT_CONFIG is not set")
    mode = "NO_BACKSLASH_ESCAPES,ANSI_QUOTES,PIPES_AS_CONCAT"
    admins = [direct(port) for port in DB_PORTS]
    saved = []
    for conn in admins:
        with conn.cursor() as cur:
            cur.execute("SELECT @@GLOBAL.sql_mode")
            saved.append(cur.fetchone()[0])
    os.makedirs(RUN_DIR, exist_ok=True)
    port, admin_port = free_ports(2)
    text = open(CONFIG, encoding="utf-8").read()
    text = re.sub(r"listen: 127\.0\.0\.1:\d+", f"listen: 127.0.0.1:{port}", text, count=1)
    text = re.sub(r"admin_listen: 127\.0\.0\.1:\d+", f"admin_listen: 127.0.0.1:{admin_port}", text, count=1)
    text = re.sub(r"cache: .*", f"cache: {RUN_DIR}/shardmap.sqlite", text)
    config = os.path.join(RUN_DIR, "shardproxy.yaml")
    open(config, "w", encoding="utf-8").write(text)
    proc = None
    try:
        for conn in admins:
            with conn.cursor() as cur:
                cur.execute(f"SET GLOBAL sql_mode = '{mode}'")
        # The shared proxy's pooled connections were opened before SET GLOBAL: a
        # session there keeps the mode it starts with and must read its statements
        # as its backend connections execute them (the mirror session is given the
        # mode the proxy session reports).
        pair = Pair()
        reported = outcome(pair.proxy, b"SELECT @@SESSION.sql_mode")[0][2][0][0]
        reported = reported.decode() if isinstance(reported, bytes) else reported
        outcome(pair.mirror, ("SET sql_mode = '%s'" % reported).encode())
        for label, sql in mode_statements() + comment_statements()[:2]:
            p, m = pair.both(sql.encode())
            tally.check("global default", "pooled " + label, sql.encode(), p, m)
        pair.close()
        log = open(os.path.join(RUN_DIR, "shardproxy.log"), "w")
        proc = subprocess.Popen([BINARY, "--config", config], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while True:
            try:
                connect(port, "app", "app_pw", "im").close()
                break
            except pymysql.err.MySQLError:
                if time.time() > deadline or proc.poll() is not None:
                    raise SystemExit("the proxy of the global-default case did not start; see " + log.name)
                time.sleep(0.2)
        pair = Pair(proxy_port=port)
        for label, sql in mode_statements() + comment_statements()[:2]:
            p, m = pair.both(sql.encode())
            tally.check("global default", label, sql.encode(), p, m)
        s = b"SELECT @@sql_mode"
        p, m = pair.both(s)
        tally.check("global default", "mode", s, p, m)
        pair.close()
    finally:
        for conn, value in zip(admins, saved):
            with conn.cursor() as cur:
                cur.execute("SET GLOBAL sql_mode = %s", (value,))
            conn.close()
        if proc:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=20)


def run_multi_statements(tally, counter):
    """Packets of several statements: each result, its affected rows and its MORE_RESULTS flag as the mirror's."""
    a, b, c = counter(), counter(), counter()
    packets = [
        ("passthrough first, then sharded", "SET @v = 1; SELECT COUNT(*) FROM msg WHERE conv_id = 12934"),
        ("USE first", "USE {db}; SELECT COUNT(*) FROM msg WHERE conv_id = 12934"),
        ("BEGIN, write on db1, COMMIT",
         f"BEGIN; INSERT INTO msg (conv_id, seq, msg_id, sender_uid, content) VALUES (12941, {a}, {a}, 1, 'm'); COMMIT"),
        ("two backends", "SELECT COUNT(*) FROM msg WHERE conv_id = 12934; SELECT COUNT(*) FROM msg WHERE conv_id = 12941"),
        ("three results, two backends",
         "SELECT COUNT(*) FROM msg WHERE conv_id = 549; SELECT content FROM msg WHERE conv_id = 12941 AND msg_id = "
         f"{a}; SELECT 1"),
        ("write on db1 then read db0",
         f"INSERT INTO msg (conv_id, seq, msg_id, sender_uid, content) VALUES (12941, {b}, {b}, 1, 'n'); "
         "SELECT COUNT(*) FROM msg WHERE conv_id = 12934"),
        ("one shard, rewritten", "SELECT COUNT(*) FROM msg WHERE conv_id = 549; SELECT COUNT(*) FROM msg WHERE conv_id = 12934"),
        ("sql_mode change mid-packet",
         "SET sql_mode = 'ANSI_QUOTES'; SELECT COUNT(*) FROM msg WHERE \"conv_id\" = 549; SET sql_mode = DEFAULT"),
        ("NO_BACKSLASH_ESCAPES mid-packet",
         "SET sql_mode = 'NO_BACKSLASH_ESCAPES'; SELECT COUNT(*) FROM msg WHERE conv_id = 12934 AND content <> 'a\\' "
         "OR conv_id = 549 -- '; SET sql_mode = DEFAULT"),
        ("charset change mid-packet",
         b"SET NAMES gbk; INSERT INTO msg (content, sender_uid, conv_id, seq, msg_id) VALUES (CONCAT('\x95\x5c', "
         b"'), 1, 549, %d, %d) -- '), 1, 12934, %d, %d); SET NAMES utf8mb4" % (c, c, c, c)),
        ("error stops the packet", "SELECT 1; SELECT * FROM no_such_table_dialect; SELECT 2"),
        ("error in second backend's statement", "SELECT COUNT(*) FROM msg WHERE conv_id = 12934; SELECT nope FROM msg WHERE conv_id = 12941; SELECT 3"),
        ("comment trap across statements", "SELECT 1 /*!80000 ; */; SELECT COUNT(*) FROM msg WHERE conv_id = 12934"),
        ("versioned comment hides a statement", "SELECT COUNT(*) FROM msg WHERE conv_id = 12934 /*!99999 ; DELETE FROM msg */"),
        ("delete on db1, read db0",
         f"DELETE FROM msg WHERE conv_id = 12941 AND msg_id IN ({a}, {b}); SELECT COUNT(*) FROM msg WHERE conv_id = 549"),
        ("scatter in a packet", "SELECT 1; SELECT COUNT(*) FROM msg WHERE conv_id IN (549, 12941)"),
        ("keyless in a packet", "SELECT COUNT(*) FROM msg; SELECT 1"),
        ("trailing semicolon", "SELECT COUNT(*) FROM msg WHERE conv_id = 12941;"),
        ("procedure result", "SELECT 1; CALL dialect_set_mode(); SELECT @@sql_mode"),
    ]
    for label, sql in packets:
        # A session of its own per packet: state one packet leaves (a user
        # variable pins the session to its backend) must not decide the next.
        pair = Pair(multi=True)
        raw = sql if isinstance(sql, bytes) else sql.encode()
        p, m = pair.both(raw)
        verdict = tally.check("multi-statement", label, raw, p, m)
        if verdict == "refused" and "statement" not in p[-1][2]:
            tally.diffs.append(("multi-statement", label + ": refusal does not name the statement", raw, p, m))
        pair.close()


def run_set_option(tally):
    """COM_SET_OPTION: without CLIENT_MULTI_STATEMENTS a packet is one (broken) statement; after
    MYSQL_OPTION_MULTI_STATEMENTS_ON its statements are planned and run, as on the server."""
    packet = b"SELECT COUNT(*) FROM msg WHERE conv_id = 12934; SELECT COUNT(*) FROM msg WHERE conv_id = 12941"
    pair = Pair()
    p, m = pair.both(packet)
    tally.check("set option", "multi-statements off", packet, p, m)
    for conn in (pair.proxy, pair.mirror):
        conn._execute_command(0x1B, b"\x00\x00")  # COM_SET_OPTION, MYSQL_OPTION_MULTI_STATEMENTS_ON
        conn._read_packet()
    p, m = pair.both(packet)
    verdict = tally.check("set option", "multi-statements on", packet, p, m)
    if verdict == "same" and len(p) != 2:
        tally.diffs.append(("set option", "expected two results", packet, p, m))
    pair.close()


def run_names(tally):
    """Table names as the backends resolve them (lower_case_table_names is read from them)."""
    conn = direct(DB_PORTS[0])
    with conn.cursor() as cur:
        cur.execute("SELECT @@lower_case_table_names")
        lctn = cur.fetchone()[0]
    conn.close()
    statements = [
        ("schema-qualified", "SELECT COUNT(*) FROM {db}.msg WHERE conv_id = 12934"),
        ("quoted schema and table", "SELECT COUNT(*) FROM `{db}`.`msg` WHERE conv_id = 12941"),
        ("qualified column", "SELECT COUNT(*) FROM {db}.msg WHERE msg.conv_id = 549"),
        ("upper-case table", "SELECT COUNT(*) FROM MSG WHERE conv_id = 12934"),
        ("upper-case quoted", "SELECT COUNT(*) FROM `Msg` WHERE conv_id = 12934"),
        ("other schema", f"SELECT COUNT(*) FROM {OTHER_DB}.msg WHERE conv_id = 12934"),
        ("other schema quoted", f"SELECT COUNT(*) FROM `{OTHER_DB}`.`msg` WHERE conv_id = 12934"),
        ("other schema join", f"SELECT COUNT(*) FROM msg JOIN {OTHER_DB}.msg o ON o.conv_id = msg.conv_id "
                              "WHERE msg.conv_id = 12934"),
        ("USE other", f"USE {OTHER_DB}"),
        ("unqualified in other", "SELECT COUNT(*) FROM msg WHERE conv_id = 12934"),
        ("qualified from other", "SELECT COUNT(*) FROM {db}.msg WHERE conv_id = 12934"),
        ("USE back", "USE {db}"),
        ("unqualified again", "SELECT COUNT(*) FROM msg WHERE conv_id = 12934"),
    ]
    pair = Pair()
    for label, sql in statements:
        p, m = pair.both(sql.encode())
        tally.check("names", f"lower_case_table_names={lctn} {label}", sql.encode(), p, m)
    pair.close()


def issue_examples(tally):
    """The issue's own examples, with the answers spelled out (not only equal to the mirror's)."""
    pair = Pair()
    sql = b"SELECT COUNT(*) FROM msg WHERE conv_id = /*!80000 549 AND conv_id = */ 12934"
    p, m = pair.both(sql)
    if p != m or p[0][2] != ((300,),):
        tally.diffs.append(("issue examples", "/*!80000 must count conv 12934's 300 rows", sql, p, m))
    pair.close()
    # gbk: the row lands in msg_06 (conv_id 12934), never msg_05 (549); the DELETE removes it there.
    pair = Pair("gbk", "handshake")
    mid = 909999999
    insert = (b"INSERT INTO msg (content, sender_uid, conv_id, seq, msg_id) VALUES (CONCAT('\x95\x5c', "
              b"'), 1, 549, %d, %d) -- '), 1, 12934, %d, %d)" % (mid, mid, mid, mid))
    delete = b"DELETE FROM msg WHERE content = CONCAT('\x95\x5c', '), 1, 549, %d, %d) -- ') AND conv_id = 12934" % (
        mid, mid)
    where = []
    for step in (insert, delete):
        p, m = pair.both(step)
        if p != m:
            tally.diffs.append(("issue examples", "gbk 0x5C", step, p, m))
        found = []
        for port, table in (physical(12934), physical(549)):
            conn = direct(port)
            with conn.cursor() as cur:
                cur.execute(f"SELECT conv_id FROM {table} WHERE msg_id = %s", (mid,))
                found += [(table, row[0]) for row in cur.fetchall()]
            conn.close()
        where.append(found)
    if where != [[("msg_06", 12934)], []]:
        tally.diffs.append(("issue examples", f"gbk 0x5C row placement {where}", insert, None, None))
    pair.close()


def teardown():
    """The other schema and its grant go: integration.direct_backends checks the account's least privilege."""
    db0 = direct(DB_PORTS[0], None)
    with db0.cursor() as cur:
        for account in ("'proxy'@'127.0.0.1'", "'proxy'@'%'", "'proxy'@'localhost'"):
            cur.execute(f"REVOKE ALL PRIVILEGES ON `{OTHER_DB}`.* FROM {account}")
        cur.execute(f"DROP DATABASE IF EXISTS {OTHER_DB}")
    db0.close()


def main():
    setup()
    try:
        return run_comparisons()
    finally:
        teardown()


def run_comparisons():
    tally = Tally()
    issue_examples(tally)
    next_id = [910000000]

    def counter():
        next_id[0] += 1
        return next_id[0]

    stats = run_matrix(tally, counter)
    run_mode_sources(tally, counter)
    run_global_default(tally)
    run_multi_statements(tally, counter)
    run_set_option(tally)
    run_names(tally)
    placement = placement_errors()
    per_cell = len(comment_statements()) + len(mode_statements())
    print(f"matrix: {stats['modes']} modes x {stats['charsets']} charsets x ({per_cell} statements + "
          "writes per value); parts: same / refused / different:")
    for part, (same, refused, diff) in tally.by_part.items():
        print(f"  {part}: {same} / {refused} / {diff}")
    print(f"total: {tally.same} same, {tally.refused} refused, {len(tally.diffs)} different; "
          f"placement errors: {len(placement)}")
    for part, context, sql, p, m in tally.diffs:
        print(f"different: {part} {context}")
    for part, context, sql, p, m in tally.diffs[:40]:
        print(f"DIFFERENT {part} {context}\n  sql: {sql!r}\n  proxy:  {p!r}\n  mirror: {m!r}")
    for e in placement[:20]:
        print("PLACEMENT", e)
    return 1 if tally.diffs or placement else 0


if __name__ == "__main__":
    sys.exit(main())
