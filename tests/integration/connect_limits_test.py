"""Connect-time limits and pooled connections (issue 27).

MariaDB fixes a session's max_allowed_packet (and net_buffer_length) when the
session logs in; neither a reset nor SET SESSION changes it afterwards. A pooled
backend connection opened while the global was low must not refuse, later, a
statement a fresh connection to the server accepts; one opened while it was
high must not accept what a fresh connection refuses. Both are checked here
deterministically, each against the same statement sent directly to the server.

SET GLOBAL needs a backend account that may run it: this test starts its own
proxy (free ports) from a copy of the integration config whose backends log in
as root@127.0.0.1 (scripts/cluster creates it), with a privileged client account.
The global is always restored, directly on the server, even when a check fails.
"""
import os
import re
import signal
import subprocess
import sys
import time
import unittest

import pymysql

from free_ports import free_ports

HOST = "127.0.0.1"
DB0_PORT = int(os.environ.get("SP_DB0_PORT", "3307"))
CONFIG = os.environ["SP_CONNECT_LIMITS_CONFIG"]
BINARY = os.environ["SP_PROXY_BINARY"]
RUN_DIR = os.environ["SP_CONNECT_LIMITS_RUN_DIR"]
ROOT_PASSWORD = "root_pw"
LOW = 1 << 20  # 1 MiB: below the statement size used here
BIG_BYTES = 3 << 20  # a 3 MiB statement: above LOW, below the server's default (16 MiB)
TOO_LARGE = 1153  # ER_NET_PACKET_TOO_LARGE
# A client sending more than the server takes may see the server's 1153, or,
# when the server closes the connection while the client is still writing,
# its own 2006 / 2013: all three are "refused as too large" for a direct client.
REFUSED_DIRECT = {TOO_LARGE, 2006, 2013}


def direct_root():
    return pymysql.connect(host=HOST, port=DB0_PORT, user="root", password=ROOT_PASSWORD, autocommit=True,
                           connect_timeout=10, read_timeout=60)


def scalar(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchone()[0]


def big_statement(payload_bytes=None):
    """SELECT LENGTH('xx...'): BIG_BYTES of x, or a COM_QUERY payload (command byte included) of exactly payload_bytes."""
    head, tail = "SELECT LENGTH('", "')"
    count = BIG_BYTES if payload_bytes is None else payload_bytes - 1 - len(head) - len(tail)
    return head + "x" * count + tail


def outcome(connect, payload_bytes=None):
    """What a fresh session answers to the big statement: ('ok', length) or ('error', errno)."""
    try:
        conn = connect()
    except pymysql.err.MySQLError as e:
        return ("connect error", e.args[0])
    try:
        return ("ok", scalar(conn, big_statement(payload_bytes)))
    except pymysql.err.MySQLError as e:
        return ("error", e.args[0])
    finally:
        try:
            conn.close()
        except Exception:
            pass


class ConnectLimits(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(RUN_DIR, exist_ok=True)
        cls.port, admin_port = free_ports(2)
        with open(CONFIG, encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r"listen: 127\.0\.0\.1:\d+", f"listen: 127.0.0.1:{cls.port}", text, count=1)
        text = re.sub(r"admin_listen: 127\.0\.0\.1:\d+", f"admin_listen: 127.0.0.1:{admin_port}", text, count=1)
        text = re.sub(r"cache: .*", f"cache: {RUN_DIR}/shardmap.sqlite", text)
        # Backends as root (may SET GLOBAL); a small pool so borrows are predictable.
        text = re.sub(r"    user: proxy\n    password: proxy_pw\n",
                      f"    user: root\n    password: {ROOT_PASSWORD}\n", text)
        text = re.sub(r"    max_connections: 64\n", "    max_connections: 16\n", text)
        if f"password: {ROOT_PASSWORD}" not in text:
            raise SystemExit("could not point the test proxy's backends at root: config layout changed")
        config = os.path.join(RUN_DIR, "shardproxy.yaml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(text)
        with direct_root() as d:
            cls.original = scalar(d, "SELECT @@GLOBAL.max_allowed_packet")
        if cls.original < 2 * BIG_BYTES:
            raise SystemExit(f"the server's max_allowed_packet ({cls.original}) is below this test's statement")
        cls.log = open(os.path.join(RUN_DIR, "shardproxy.log"), "w")
        cls.proc = subprocess.Popen([BINARY, "--config", config], stdout=cls.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while True:
            try:
                cls.proxy().close()
                break
            except pymysql.err.MySQLError:
                if time.time() > deadline or cls.proc.poll() is not None:
                    raise SystemExit("the test proxy did not start; see " + cls.log.name)
                time.sleep(0.2)

    @classmethod
    def tearDownClass(cls):
        with direct_root() as d:
            with d.cursor() as cur:
                cur.execute("SET GLOBAL max_allowed_packet = %s", (cls.original,))
        cls.proc.send_signal(signal.SIGTERM)
        cls.proc.wait(timeout=20)
        cls.log.close()

    @classmethod
    def proxy(cls):
        return pymysql.connect(host=HOST, port=cls.port, user="dba", password="dba_pw", database="im",
                               autocommit=True, connect_timeout=10, read_timeout=60)

    def set_global_through_proxy(self, value):
        with self.proxy() as dba:
            with dba.cursor() as cur:
                cur.execute(f"SET GLOBAL max_allowed_packet = {value}")

    def fill_pool(self, sessions=6):
        """Several sessions at once, each running a statement: the pool opens connections now."""
        conns = [self.proxy() for _ in range(sessions)]
        for c in conns:
            with c.cursor() as cur:
                cur.execute("BEGIN")  # pins a connection each, so each is a distinct one
                cur.execute("SELECT @@max_allowed_packet")
                cur.fetchall()
        for c in conns:
            with c.cursor() as cur:
                cur.execute("COMMIT")
            c.close()

    def tearDown(self):
        with direct_root() as d:
            with d.cursor() as cur:
                cur.execute("SET GLOBAL max_allowed_packet = %s", (self.original,))

    def test_connection_opened_while_low_does_not_refuse_later(self):
        # Lower the global through the proxy, open pooled connections while it is low,
        # restore it, then a fresh client session sends a statement above the old limit.
        self.set_global_through_proxy(LOW)
        self.fill_pool()
        self.set_global_through_proxy(self.original)
        expected = outcome(direct_root)
        self.assertEqual(expected, ("ok", BIG_BYTES))
        for attempt in range(6):  # every pooled connection would be lent in turn
            self.assertEqual(outcome(self.proxy), expected, f"attempt {attempt}")

    def test_connection_opened_while_high_does_not_accept_later(self):
        # The opposite (issue 30): pooled connections opened at the default, then the
        # global is lowered through the proxy: a fresh session is refused as on the server.
        self.fill_pool()
        self.set_global_through_proxy(LOW)
        kind, code = outcome(direct_root)
        self.assertEqual(kind, "error")
        self.assertIn(code, REFUSED_DIRECT)
        # The proxy reads the whole statement, so its client always gets the
        # server's own answer.
        for attempt in range(6):
            self.assertEqual(outcome(self.proxy), ("error", TOO_LARGE), f"attempt {attempt}")
        # At the boundary, as the server: a payload one byte under the limit
        # passes, one of exactly the limit is refused.
        for payload in (LOW - 1, LOW):
            kind, _ = outcome(direct_root, payload)
            got = outcome(self.proxy, payload)
            self.assertEqual(got[0], kind, f"payload of {payload} bytes: direct {kind}, through the proxy {got}")
            if kind == "error":
                self.assertEqual(got, ("error", TOO_LARGE))
        # And small statements still work on the fresh connections.
        with self.proxy() as p:
            self.assertEqual(scalar(p, "SELECT @@max_allowed_packet"), LOW)

    def test_session_that_ran_set_global_keeps_its_pinned_value(self):
        # A session in a transaction keeps the connection it logged in with, as its
        # own server session would; the change applies to sessions that start later.
        with self.proxy() as p:
            with p.cursor() as cur:
                cur.execute("BEGIN")
                cur.execute("SELECT @@max_allowed_packet")
                before = cur.fetchone()[0]
                self.set_global_through_proxy(LOW)
                cur.execute("SELECT @@max_allowed_packet")
                self.assertEqual(cur.fetchone()[0], before)
                cur.execute("COMMIT")
        with self.proxy() as fresh:
            self.assertEqual(scalar(fresh, "SELECT @@max_allowed_packet"), LOW)


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False, verbosity=2).result.wasSuccessful() else 1)
