"""Hostile clients (issue 12): nothing a client sends can crash, starve or
exhaust the proxy. Loopback only, bounded (about 20 s).

Two proxies of its own (free ports, scratch config under SP_SCATTER_IT_DIR,
helpers of scatter_failure_proxy.py) in front of the shared test cluster,
with a sharded table of the run's own:
  - `guarded`: server.handshake_timeout_ms 1000, wait_timeout_s 2, the
    default 16 KiB cap on packets before login;
  - `per_host`: server.max_connections_per_host 5.

Each case below fails on the proxy before issue 12: (a) grew by 16 MiB per
socket (652 MiB for 40), (b) never closed the sockets, (c) had no per-host
limit, (d) died of a stack overflow.

RSS budget stated here: while 48 sockets announce 16 MiB packets before login,
and 40 logged-in sessions announce 16 MiB packets they never send, the
proxy's VmRSS grows by less than 32 MiB (kRssGrowthBudget).
"""
import os
import socket
import struct
import time
import unittest

import pymysql

import scatter_failure_proxy as sf

RSS_GROWTH_BUDGET_KIB = 32 * 1024
ER_CON_COUNT_ERROR = 1040
ER_HANDSHAKE_ERROR = 1043
TOO_COMPLEX = 9115


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def peak_rss_kib(pid, seconds):
    """Highest VmRSS seen while sampling for `seconds`."""
    peak, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        peak = max(peak, rss_kib(pid))
        time.sleep(0.05)
    return peak


def read_until_closed(sock, timeout):
    """All bytes until the peer closes; (bytes, seconds waited, closed?)."""
    sock.settimeout(timeout)
    start, data = time.monotonic(), b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return data, time.monotonic() - start, True
            data += chunk
    except (ConnectionResetError, BrokenPipeError):
        return data, time.monotonic() - start, True
    except socket.timeout:
        return data, time.monotonic() - start, False


def err_code(data):
    """Error number of the first ERR packet in `data` (a stream of packets), or None."""
    while len(data) >= 4:
        length = data[0] | data[1] << 8 | data[2] << 16
        payload = data[4:4 + length]
        if payload[:1] == b"\xff":
            return struct.unpack("<H", payload[1:3])[0]
        data = data[4 + length:]
    return None


def start_proxy(name, table, server):
    """A ProxyRun whose config gets extra `server:` keys."""
    run = sf.ProxyRun(name, table, {"multi_shard_writes": "refuse"})
    with open(run.config_path) as f:
        text = f.read()
    extra = "".join(f"  {k}: {v}\n" for k, v in server.items())
    with open(run.config_path, "w") as f:
        f.write(text.replace("server:\n", "server:\n" + extra, 1))
    run.start()
    return run


def admin_counters(run):
    conn = pymysql.connect(host=sf.HOST, port=run.admin_port, user="admin", password="admin_pw",
                           connect_timeout=10)
    try:
        with conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("SHOW SESSIONS")
            return {k: int(v) for k, v in cur.fetchall()[0].items()}
    finally:
        conn.close()


class AbuseTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.table = sf.ShardedTable("it_abuse")
        cls.table.create()
        cls.guarded = start_proxy("abuse_guarded", cls.table, {"handshake_timeout_ms": 1000, "wait_timeout_s": 2})
        cls.per_host = start_proxy("abuse_per_host", cls.table, {"max_connections_per_host": 5})

    @classmethod
    def tearDownClass(cls):
        for run in (cls.guarded, cls.per_host):
            run.stop()
        cls.table.drop()

    def setUp(self):
        for run in (self.guarded, self.per_host):
            self.assertTrue(run.alive(), run.log_tail())

    def normal_client_works(self, run):
        """A fresh session inserts and reads back exactly its rows, routed by key."""
        conn = run.connect()
        try:
            key = int(time.time() * 1000) % 1_000_000
            sf.rows(conn, f"INSERT INTO {self.table.name} (conv_id, seq, body) VALUES (%s, 1, 'a'), (%s, 2, 'b')",
                    (key, key))
            got = sf.rows(conn, f"SELECT seq, body FROM {self.table.name} WHERE conv_id = %s ORDER BY seq", (key,))
            self.assertEqual(got, ((1, "a"), (2, "b")))
            sf.rows(conn, f"DELETE FROM {self.table.name} WHERE conv_id = %s", (key,))
        finally:
            conn.close()

    # (a) memory: announced lengths are never allocated
    def test_a_announced_16mib_packets_do_not_grow_rss(self):
        pid = self.guarded.proc.pid
        before = rss_kib(pid)
        pre_auth = []
        for _ in range(48):
            s = socket.create_connection((sf.HOST, self.guarded.port))
            s.recv(4096)  # greeting
            s.sendall(b"\xff\xff\xff\x01" + b"\x00" * 1000)  # a 16 MiB packet, and 1000 of its bytes
            pre_auth.append(s)
        logged_in = []
        for _ in range(40):
            conn = self.guarded.connect()
            conn._sock.sendall(b"\xfe\xff\xff\x00" + b"\x03" + b"x" * 1000)  # COM_QUERY of 16 MiB - 2, never finished
            logged_in.append(conn)
        peak = peak_rss_kib(pid, 1.5)
        print(f"\nproxy VmRSS: {before} KiB before, peak {peak} KiB with 48 pre-auth + 40 logged-in sockets "
              f"announcing 16 MiB (budget: growth < {RSS_GROWTH_BUDGET_KIB} KiB)")
        for s in pre_auth:
            data, _, closed = read_until_closed(s, 3)
            self.assertTrue(closed, "a pre-auth socket announcing 16 MiB stays open")
            self.assertEqual(err_code(data), ER_HANDSHAKE_ERROR)
            s.close()
        for conn in logged_in:
            conn._sock.close()
        self.assertLess(peak - before, RSS_GROWTH_BUDGET_KIB)
        self.assertGreaterEqual(admin_counters(self.guarded)["handshake_too_large"], 48)
        self.normal_client_works(self.guarded)

    # (b) time: a login that does not finish is dropped after handshake_timeout_ms
    def test_b_silent_and_slow_sockets_are_closed_after_the_handshake_timeout(self):
        before = admin_counters(self.guarded)["handshake_timeouts"]
        start = time.monotonic()
        silent = [socket.create_connection((sf.HOST, self.guarded.port)) for _ in range(20)]
        times = []
        for s in silent:
            _, _, closed = read_until_closed(s, 5 - (time.monotonic() - start))
            self.assertTrue(closed, "a socket that never logged in is still open after 5 s")
            times.append(time.monotonic() - start)
            s.close()
        print(f"\n20 silent sockets closed {min(times):.2f}-{max(times):.2f} s after connecting "
              f"(handshake_timeout_ms 1000)")
        self.assertGreater(min(times), 0.9)
        self.assertLess(max(times), 2.0)
        slow = socket.create_connection((sf.HOST, self.guarded.port))
        start = time.monotonic()
        slow.recv(4096)
        slow.sendall(b"\x64\x00\x00\x01")  # a 100-byte handshake response, then one byte every 200 ms
        try:
            while time.monotonic() - start < 5:
                slow.sendall(b"\x40")
                time.sleep(0.2)
        except (BrokenPipeError, ConnectionResetError):
            pass
        slow_time = time.monotonic() - start
        slow.close()
        print(f"a socket sending one byte every 200 ms closed {slow_time:.2f} s after connecting")
        self.assertLess(slow_time, 2.0)
        self.assertGreaterEqual(admin_counters(self.guarded)["handshake_timeouts"] - before, 21)
        self.normal_client_works(self.guarded)

    # (c) one host cannot take every connection
    def test_c_connections_over_the_per_host_limit_get_1040(self):
        held = [self.per_host.connect() for _ in range(5)]
        try:
            code, message = sf.error_of(lambda: self.per_host.connect())
            self.assertEqual(code, ER_CON_COUNT_ERROR)
            self.assertIn("max_connections_per_host", message)
            raw = socket.create_connection((sf.HOST, self.per_host.port))  # refused before any greeting
            data, _, closed = read_until_closed(raw, 3)
            raw.close()
            self.assertTrue(closed)
            self.assertEqual(data[3], 0, "the ERR is the first packet (sequence id 0)")
            self.assertEqual(err_code(data), ER_CON_COUNT_ERROR)
        finally:
            held.pop().close()
        time.sleep(0.2)  # the slot is released when the session's coroutine ends
        self.normal_client_works(self.per_host)
        for conn in held:
            conn.close()
        self.assertGreaterEqual(admin_counters(self.per_host)["refused_per_host"], 2)

    # (d) statements: a clear error, and the proxy goes on answering
    def test_d_deep_statements_get_a_clear_error(self):
        conn = self.guarded.connect(max_allowed_packet=64 << 20, read_timeout=120)
        try:
            terms = f"SELECT conv_id FROM {self.table.name} WHERE conv_id = 5" + " AND 1" * 999_999
            code, message = sf.error_of(lambda: sf.rows(conn, terms))
            self.assertEqual(code, TOO_COMPLEX, message)
            self.assertIn("too complex", message)
            print(f"\n1M-term AND chain ({len(terms) / 1e6:.1f} MB): {code} {message[:100]}")
            parens = "SELECT " + "(" * 100_000 + "1" + ")" * 100_000
            code, message = sf.error_of(lambda: sf.rows(conn, parens))
            self.assertEqual(code, TOO_COMPLEX, message)
            self.assertIn("nesting too deep", message)
            nots = f"SELECT * FROM {self.table.name} WHERE " + "NOT " * 500_000 + "conv_id = 1"
            self.assertEqual(sf.error_of(lambda: sf.rows(conn, nots))[0], TOO_COMPLEX)
            in_list = f"SELECT * FROM {self.table.name} WHERE conv_id IN (1" + ",1" * 10_000_000 + ")"
            code, message = sf.error_of(lambda: sf.rows(conn, in_list))
            self.assertEqual(code, TOO_COMPLEX, message)
            print(f"10M-value IN list ({len(in_list) / 1e6:.1f} MB): {code} {message[:100]}")
            self.assertEqual(sf.rows(conn, "SELECT 1"), ((1,),), "the session itself goes on")
        finally:
            conn.close()
        self.assertTrue(self.guarded.alive(), self.guarded.log_tail())
        self.normal_client_works(self.guarded)

    # (e) wait_timeout: an idle logged-in session is closed, an active one is not
    def test_e_idle_sessions_are_closed_after_wait_timeout(self):
        before = admin_counters(self.guarded)["idle_timeouts"]
        idle, active = self.guarded.connect(), self.guarded.connect()
        try:
            for _ in range(4):
                time.sleep(1)
                self.assertEqual(sf.rows(active, "SELECT 1"), ((1,),))
            _, waited, closed = read_until_closed(idle._sock, 3)
            self.assertTrue(closed, "an idle session outlived wait_timeout_s 2 by 3 s")
            self.assertGreaterEqual(admin_counters(self.guarded)["idle_timeouts"] - before, 1)
        finally:
            active.close()
            idle._sock.close()


if __name__ == "__main__":
    unittest.main()
