"""What one session or one user may take from the others (issue 12, item 2-3):
  - a session's own wait_timeout (`SET wait_timeout`, `SET SESSION ...`,
    `SET @@wait_timeout`, `= DEFAULT`) and interactive_timeout for clients
    with CLIENT_INTERACTIVE, compared with a MariaDB backend reached directly;
  - users[].max_pinned_connections: a user's pinned sessions hold at most
    that many backend connections; the next pin gets 1226, others are served;
  - scatter.max_merge_bytes_total: the merge memory of all concurrent
    scatter statements together; one over it gets 9006 and frees what it held.

A proxy of its own (free ports, scratch config under SP_SCATTER_IT_DIR,
helpers of scatter_failure_proxy.py) in front of the shared test cluster:
server.wait_timeout_s 30, interactive_timeout_s 3; a user `it_pin` with
max_pinned_connections 3; scatter.max_merge_bytes_total MERGE_TOTAL; backends'
max_connections 32 (16 per worker thread: two scatters of 8 shards per backend).
Each case fails on the proxy before these limits (the session timeout was the
global one, pins and merges were unbounded).
"""
import select
import socket
import threading
import time
import unittest

import pymysql
from pymysql.constants import CLIENT

import scatter_failure_proxy as sf

ER_USER_LIMIT_REACHED = 1226
MERGE_MEMORY_EXHAUSTED = 9006
PIN_USER, PIN_PASSWORD, PIN_LIMIT = "it_pin", "it_pin_pw", 3
# One merge of MERGE_ROWS distinct 600-byte groups reserves about 2 KiB a
# group (~20 MiB); its 6 MB of output cannot all wait in kernel buffers
# (4 MiB tcp_wmem maximum, a 4 KiB receive buffer), so a client that does not
# read keeps the statement, and its reservation, alive.
MERGE_TOTAL = 32 << 20
MERGE_ROWS = 10000
BODY_BYTES = 600


def start_proxy(table):
    run = sf.ProxyRun("session_budgets", table,
                      {"multi_shard_writes": "refuse", "max_merge_bytes": 64 << 20,
                       "max_merge_bytes_total": MERGE_TOTAL},
                      max_connections=32, server_extra="  wait_timeout_s: 30\n  interactive_timeout_s: 3\n")
    with open(run.config_path) as f:
        text = f.read()
    text = text.replace("users:\n", "users:\n"
                        f"  - {{name: {PIN_USER}, password: {PIN_PASSWORD}, max_pinned_connections: {PIN_LIMIT}}}\n",
                        1)
    with open(run.config_path, "w") as f:
        f.write(text)
    run.start()
    return run


def admin_counters(run):
    conn = pymysql.connect(host=sf.HOST, port=run.admin_port, user="admin", password="admin_pw", connect_timeout=10)
    try:
        with conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("SHOW SESSIONS")
            return {k: int(v) for k, v in cur.fetchall()[0].items()}
    finally:
        conn.close()


def close_times(named_conns, seconds):
    """{name: time.monotonic() when the server closed the socket, or None if still open after `seconds`}."""
    start = time.monotonic()
    pending = {c._sock.fileno(): (name, c._sock) for name, c in named_conns.items()}
    closed = {name: None for name in named_conns}
    while pending and time.monotonic() - start < seconds:
        readable, _, _ = select.select([s for _, s in pending.values()], [], [], 0.1)
        for sock in readable:
            name = pending[sock.fileno()][0]
            try:
                data = sock.recv(4096, socket.MSG_PEEK)
            except ConnectionResetError:
                data = b""
            if not data or data[4:5] == b"\xff":  # EOF (or an ERR before it: counts as closed)
                closed[name] = time.monotonic()
                del pending[sock.fileno()]
    return closed


class SessionBudgetsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.table = sf.ShardedTable("it_budgets")
        cls.table.create()
        cls.proxy = start_proxy(cls.table)

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        cls.table.drop()

    def setUp(self):
        self.assertTrue(self.proxy.alive(), self.proxy.log_tail())

    def pin_user(self, **kw):
        kw.setdefault("connect_timeout", 10)
        kw.setdefault("read_timeout", 30)
        return pymysql.connect(host=sf.HOST, port=self.proxy.port, user=PIN_USER, password=PIN_PASSWORD,
                               database="im", autocommit=True, **kw)

    # (1) each session's own wait_timeout, as MariaDB keeps it
    def test_session_wait_timeout_as_on_the_server(self):
        proxy, since = {}, {}
        for name, sql in (("set", "SET wait_timeout = 2"), ("set_session", "SET SESSION wait_timeout = 2"),
                          ("set_at", "SET @@wait_timeout = 2"), ("set_local", "SET @@local.wait_timeout = 1 + 1"),
                          ("default", None), ("back_to_default", "SET wait_timeout = 2"),
                          ("raised_interactive", "SET wait_timeout = 30"), ("interactive", None)):
            interactive = name in ("raised_interactive", "interactive")
            conn = self.proxy.connect(client_flag=CLIENT.INTERACTIVE if interactive else 0)
            if sql:
                sf.rows(conn, sql)
            proxy[name], since[f"proxy.{name}"] = conn, time.monotonic()
        sf.rows(proxy["back_to_default"], "SET wait_timeout = DEFAULT")  # the proxy's global: 30 s
        self.assertEqual(sf.rows(proxy["set_local"], "SELECT @@wait_timeout"), ((2,),), "the server's view too")
        since["proxy.set_local"] = time.monotonic()
        direct = {"set": sf.direct(sf.DB0_PORT), "default": sf.direct(sf.DB0_PORT)}
        sf.rows(direct["set"], "SET wait_timeout = 2")  # MariaDB itself, for comparison
        since["direct.set"] = time.monotonic()
        everyone = {**{f"proxy.{k}": v for k, v in proxy.items()}, **{f"direct.{k}": v for k, v in direct.items()}}
        closed = close_times(everyone, 5.0)
        idle = {k: (None if v is None else v - since.get(k, 0)) for k, v in closed.items()}
        print("\nclosed after idle (s): " + ", ".join(f"{k} {'open' if v is None else f'{v:.1f}'}"
                                                       for k, v in sorted(idle.items())))
        for name in ("proxy.set", "proxy.set_session", "proxy.set_at", "proxy.set_local", "direct.set"):
            self.assertIsNotNone(idle[name], f"{name}: wait_timeout 2 but still open after 5 s")
            self.assertGreater(idle[name], 1.8, name)
            self.assertLess(idle[name], 3.5, name)
        self.assertIsNotNone(idle["proxy.interactive"], "interactive_timeout_s 3 not applied")
        self.assertGreater(idle["proxy.interactive"], 2.8)
        for name in ("proxy.default", "proxy.back_to_default", "proxy.raised_interactive", "direct.default"):
            self.assertIsNone(idle[name], f"{name} was closed after {idle[name]} s idle")
        for name in ("default", "back_to_default", "raised_interactive"):
            self.assertEqual(sf.rows(proxy[name], "SELECT 1"), ((1,),), f"{name} still answers")
        for conn in everyone.values():
            try:
                conn.close()
            except Exception:
                pass

    # (2) one user's pinned sessions cannot take every pooled connection
    def test_pinned_connections_per_user(self):
        before = admin_counters(self.proxy)["refused_pinned"]
        pinned = [self.pin_user() for _ in range(PIN_LIMIT)]
        extra = self.pin_user()
        others = [self.proxy.connect() for _ in range(4)]
        try:
            for i, conn in enumerate(pinned):
                sf.rows(conn, f"SET @x = {i}")  # a user variable: the session keeps its connection
            for i, conn in enumerate(pinned):
                self.assertEqual(sf.rows(conn, "SELECT @x"), ((i,),), "pinned: the variable lives on")
            for sql in ("SET @x = 1", "BEGIN", "SELECT GET_LOCK('it_pin', 0)"):
                code, message = sf.error_of(lambda: sf.rows(extra, sql))
                self.assertEqual(code, ER_USER_LIMIT_REACHED, f"{sql}: {message}")
                self.assertEqual(message, f"User '{PIN_USER}' has exceeded the 'max_pinned_connections' resource "
                                          f"(current value: {PIN_LIMIT})")
            backend = sf.direct(sf.DB0_PORT)
            self.assertEqual(sf.rows(backend, "SELECT IS_FREE_LOCK('it_pin')"), ((1,),),
                             "refused before it ran: the lock was never taken")
            backend.close()
            self.assertEqual(sf.rows(extra, "SELECT 1"), ((1,),), "statements that do not pin go on")
            # Another user is served meanwhile, and may pin (app has no limit).
            key = 424242
            for i, conn in enumerate(others):
                sf.rows(conn, f"INSERT INTO {self.table.name} (conv_id, seq, body) VALUES (%s, %s, 'b')", (key, i))
            sf.rows(others[1], "SET @y = 1")
            self.assertEqual(sf.rows(others[1], "SELECT @y"), ((1,),))
            self.assertEqual(sf.rows(others[0], f"SELECT COUNT(*) FROM {self.table.name} WHERE conv_id = %s",
                                     (key,)), ((len(others),),))
            sf.rows(others[0], f"DELETE FROM {self.table.name} WHERE conv_id = %s", (key,))
            # A pinned session that ends frees its slot.
            pinned.pop().close()
            deadline = time.monotonic() + 3
            while True:
                try:
                    sf.rows(extra, "SET @x = 7")
                    break
                except pymysql.err.MySQLError as e:
                    if e.args[0] != ER_USER_LIMIT_REACHED or time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            self.assertEqual(sf.rows(extra, "SELECT @x"), ((7,),))
        finally:
            for conn in pinned + [extra] + others:
                conn.close()
        self.assertGreaterEqual(admin_counters(self.proxy)["refused_pinned"] - before, 3)
        with open(self.proxy.log_path, errors="replace") as f:
            warnings = [l for l in f if "users[].max_pinned_connections" in l]
        self.assertGreaterEqual(len(warnings), 1, "the refusal is logged")
        self.assertLessEqual(len(warnings), 2, "rate-limited: at most one line per 10 s")

    def test_transactions_count_as_pins(self):
        pinned = [self.pin_user() for _ in range(PIN_LIMIT)]
        extra = self.pin_user()
        try:
            for conn in pinned:
                sf.rows(conn, "BEGIN")
                sf.rows(conn, f"SELECT COUNT(*) FROM {self.table.name} WHERE conv_id = 1")
            self.assertEqual(sf.error_of(lambda: sf.rows(extra, "START TRANSACTION"))[0], ER_USER_LIMIT_REACHED)
            sf.rows(pinned[0], "COMMIT")  # the transaction ends: its connection goes back, the slot too
            sf.rows(extra, "START TRANSACTION")
            sf.rows(extra, f"SELECT COUNT(*) FROM {self.table.name} WHERE conv_id = 1")
            sf.rows(extra, "COMMIT")
        finally:
            for conn in pinned + [extra]:
                conn.close()

    # (3) merge memory of all concurrent scatter statements together
    def test_merge_memory_of_concurrent_statements(self):
        body = "x" * (BODY_BYTES - 8)
        # Rows straight into the physical tables (16 shards), each with its own body: one group each.
        per_shard = {}
        for i in range(MERGE_ROWS):
            per_shard.setdefault(i % sf.SHARDS, []).append(i)
        for shard, ids in per_shard.items():
            conn = sf.direct(sf.backend_port(shard))
            try:
                values = ",".join(f"({shard + 16 * (i // 16 + 100000)}, 1, '{i:08d}{body}')" for i in ids)
                sf.rows(conn, f"INSERT INTO {self.table.physical(shard)} (conv_id, seq, body) VALUES {values}")
            finally:
                conn.close()
        query = (f"SELECT body, COUNT(*) FROM {self.table.name} WHERE conv_id >= 1600000 "
                 f"GROUP BY body ORDER BY body")
        before = admin_counters(self.proxy)["refused_merge_memory"]
        # A: holds its merge while it reads its result slowly (a small receive buffer, rows left unread).
        # (The receive buffer is set before connecting, so the window stays small
        # and the proxy's writes block instead of filling megabytes of kernel buffers.)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((sf.HOST, self.proxy.port))
        holder = pymysql.connect(host=sf.HOST, port=self.proxy.port, user=sf.APP_USER, password=sf.APP_PASSWORD,
                                 database="im", autocommit=True, cursorclass=pymysql.cursors.SSCursor,
                                 defer_connect=True)
        holder.connect(sock)
        cur = holder.cursor()
        cur.execute(query)
        deadline, held = time.monotonic() + 10, 0
        while time.monotonic() < deadline:
            held = admin_counters(self.proxy)["merge_memory_in_use"]
            if held > MERGE_TOTAL // 2:
                time.sleep(0.5)  # every shard finished: what it holds now, it holds until the client reads
                held = admin_counters(self.proxy)["merge_memory_in_use"]
                break
            time.sleep(0.1)
        print(f"\nmerge memory held by a statement whose client reads slowly: {held} bytes "
              f"(scatter.max_merge_bytes_total {MERGE_TOTAL})")
        self.assertGreater(held, MERGE_TOTAL // 2)
        # B: the same statement does not fit beside it.
        other = self.proxy.connect(read_timeout=60)
        code, message = sf.error_of(lambda: sf.rows(other, query))
        self.assertEqual(code, MERGE_MEMORY_EXHAUSTED, message)
        self.assertIn("scatter.max_merge_bytes_total", message)
        self.assertEqual(admin_counters(self.proxy)["merge_memory_in_use"], held, "B freed what it held")
        # Others carry on: a routed statement, and the same session.
        self.assertEqual(sf.rows(other, f"SELECT COUNT(*) FROM {self.table.name} WHERE conv_id = 1600000"), ((1,),))
        # A reads everything: its result is whole and correct.
        got = cur.fetchall()
        self.assertEqual(len(got), MERGE_ROWS)
        self.assertTrue(all(count == 1 for _, count in got))
        self.assertEqual([b for b, _ in got], sorted(b for b, _ in got))
        holder.close()
        deadline = time.monotonic() + 3
        while admin_counters(self.proxy)["merge_memory_in_use"] != 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(admin_counters(self.proxy)["merge_memory_in_use"], 0, "A's reservation is freed at its end")
        self.assertEqual(len(sf.rows(other, query)), MERGE_ROWS, "alone, B fits")
        other.close()
        self.assertGreaterEqual(admin_counters(self.proxy)["refused_merge_memory"] - before, 1)


if __name__ == "__main__":
    unittest.main()
