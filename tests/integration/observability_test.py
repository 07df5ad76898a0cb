"""Observability (issue 16): the /metrics endpoint, query digests and the
slow-query log of a proxy started by this test (scatter_failure_proxy.ProxyRun)
with metrics on, every statement logged as slow (slow_query_ms: 0), and a
sharded table of its own.

Counters are checked as deltas between two scrapes around known statements on
the test's own table (the `table` label), so statements of the driver's
connection set-up do not disturb them. The exposition text is validated with
`promtool check metrics` when promtool is installed (Debian: prometheus).
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import unittest
import urllib.error
import urllib.request

import pymysql

from free_ports import free_ports
from scatter_failure_proxy import HOST, ProxyRun, ShardedTable, error_of, rows

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    """{(name, frozenset(labels.items())): float} of every sample line."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        labels = frozenset(LABEL.findall(m.group(3) or ""))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())), 0.0)


class ObservabilityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.table = ShardedTable("obs")
        cls.table.create()
        (cls.metrics_port,) = free_ports(1)
        cls.run_dir_name = "observability"
        cls.proxy = ProxyRun(
            cls.run_dir_name, cls.table, {"multi_shard_writes": "best_effort", "shard_timeout_ms": 1000},
            server_extra=f"  metrics_listen: {HOST}:{cls.metrics_port}\n",
            sections="log:\n  slow_query_file: slow.jsonl\n  slow_query_ms: 0\ndigests:\n  max_entries: 100\n")
        cls.slow_path = os.path.join(cls.proxy.dir, "slow.jsonl")
        cls.proxy.start()

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        cls.table.drop()

    def url(self, path):
        return f"http://{HOST}:{self.metrics_port}{path}"

    def scrape(self):
        with urllib.request.urlopen(self.url("/metrics"), timeout=10) as r:
            self.assertEqual(r.status, 200)
            self.assertTrue(r.headers["Content-Type"].startswith("text/plain; version=0.0.4"))
            return r.read().decode()

    def admin(self, sql):
        conn = pymysql.connect(host=HOST, port=self.proxy.admin_port, user="admin", password="admin_pw",
                               connect_timeout=10)
        try:
            return rows(conn, sql)
        finally:
            conn.close()

    runs = 0

    def slow_log_entries(self, until):
        """The slow log's JSON objects once `until(entries)` holds (a line is written just after its answer
        is sent, so a client can read the file before the last line is there); at most 10 s."""
        deadline = time.monotonic() + 10
        while True:
            entries = []
            if os.path.exists(self.slow_path):
                with open(self.slow_path) as f:
                    entries = [json.loads(line) for line in f if line.endswith("\n")]
            if until(entries) or time.monotonic() > deadline:
                return entries
            time.sleep(0.05)

    def run_known_statements(self):
        """4 routed, 1 in_pruned, 1 scatter, 1 refused statement on the test table; each call adds 3 rows."""
        t = self.table.name
        ObservabilityTest.runs += 1
        n = ObservabilityTest.runs
        conn = self.proxy.connect()
        try:
            rows(conn, f"INSERT INTO {t} (conv_id, seq, body) VALUES (1, {n}, 'secret-one')")
            rows(conn, f"INSERT INTO {t} (conv_id, seq, body) VALUES (2, {n}, 'secret-two')")
            rows(conn, f"INSERT INTO {t} (conv_id, seq, body) VALUES (17, {n}, 'secret-three')")
            self.assertEqual(len(rows(conn, f"SELECT body FROM {t} WHERE conv_id = 1")), n)
            self.assertEqual(len(rows(conn, f"SELECT conv_id FROM {t} WHERE conv_id IN (1, 2, 17)")), 3 * n)
            self.assertEqual(rows(conn, f"SELECT COUNT(*) FROM {t}")[0][0], 3 * n)
            code, _ = error_of(lambda: rows(conn, f"UPDATE {t} SET body = 'x'"))
            self.assertEqual(code, 9101)
        finally:
            conn.close()

    def test_1_counters_move_exactly(self):
        before = parse_metrics(self.scrape())
        self.run_known_statements()
        t = self.table.name
        # A statement is recorded just after its answer is sent: wait for the last one (the refusal).
        deadline = time.monotonic() + 10
        while True:
            text = self.scrape()
            after = parse_metrics(text)
            refused = ("shardproxy_statements_total", frozenset({"table": "-", "plan": "refused", "outcome": "error"}.items()))
            if after.get(refused, 0) > before.get(refused, 0) or time.monotonic() > deadline:
                break
            time.sleep(0.05)

        def delta(name, **labels):
            return value(after, name, **labels) - value(before, name, **labels)

        self.assertEqual(delta("shardproxy_statements_total", table=t, plan="route", outcome="ok"), 4)
        self.assertEqual(delta("shardproxy_statements_total", table=t, plan="in_pruned", outcome="ok"), 1)
        self.assertEqual(delta("shardproxy_statements_total", table=t, plan="scatter", outcome="ok"), 1)
        # The planner refuses before it names a table: refusals carry table "-".
        self.assertEqual(delta("shardproxy_statements_total", table="-", plan="refused", outcome="error"), 1)
        self.assertEqual(delta("shardproxy_refusals_total", code="9101"), 1)
        self.assertEqual(delta("shardproxy_statement_errors_total", code="9101"), 1)
        self.assertGreaterEqual(delta("shardproxy_statement_duration_seconds_count", plan="route"), 4)
        self.assertEqual(delta("shardproxy_statement_duration_seconds_count", plan="scatter"), 1)
        # Fan-out: the IN list touched 2 shards (1, 2, 17 -> shards 1, 2, 1), the scatter all 16.
        self.assertEqual(delta("shardproxy_scatter_fanout_shards_count"), 2)
        self.assertEqual(delta("shardproxy_scatter_fanout_shards_sum"), 2 + 16)
        self.assertEqual(delta("shardproxy_scatter_merge_rows_total"), 3 * self.runs + 1)
        # Merged bytes: at least the row bytes of those rows; the merge buffer observed once per merged scatter.
        self.assertGreater(delta("shardproxy_scatter_merge_bytes_total"), 3 * self.runs + 1)
        self.assertEqual(delta("shardproxy_scatter_merge_buffer_bytes_count"), 2)
        # Per shard: 4 routed statements on one shard each, the IN list on 2, the scatter on 16
        # (the refusal ran on none); conv_id 1 and 17 live on shard 01: both INSERTs, the SELECT,
        # the IN list and the scatter ran there.
        shard_names = [f"{i:02d}" for i in range(16)]
        self.assertEqual(sum(delta("shardproxy_shard_statements_total", table=t, shard=s) for s in shard_names),
                         4 + 2 + 16)
        self.assertEqual(delta("shardproxy_shard_statements_total", table=t, shard="01"), 5)
        self.assertEqual(delta("shardproxy_shard_statements_total", table=t, shard="02"), 3)
        self.assertEqual(delta("shardproxy_shard_statement_errors_total", table=t, shard="01"), 0)
        # Rows per shard: shard 01 holds conv_id 1 and 17 (the SELECT, the IN list and its COUNT row).
        self.assertEqual(delta("shardproxy_shard_rows_total", table=t, shard="01"), self.runs + 2 * self.runs + 1)
        self.assertEqual(sum(delta("shardproxy_shard_rows_total", table=t, shard=s) for s in shard_names),
                         self.runs + 3 * self.runs + 16)
        # Rows the backends returned: the routed SELECT (1 row), the IN list's shards (3), every COUNT shard (16).
        self.assertEqual(sum(delta("shardproxy_backend_rows_total", backend=b) for b in ("db0", "db1")),
                         self.runs + 3 * self.runs + 16)
        # Both backends ran statements; pools are visible per backend.
        for backend in ("db0", "db1"):
            self.assertGreater(delta("shardproxy_backend_statements_total", backend=backend), 0)
            self.assertGreater(value(after, "shardproxy_backend_pool_max_connections", backend=backend), 0)
            self.assertGreater(value(after, "shardproxy_backend_pool_wait_seconds_count", backend=backend), 0)
            self.assertEqual(delta("shardproxy_backend_statement_duration_seconds_count", backend=backend),
                             delta("shardproxy_backend_statements_total", backend=backend))
        self.assertEqual(value(after, "shardproxy_shard_map_version"), 1)
        self.assertGreater(value(after, "shardproxy_shard_map_last_reload_timestamp_seconds"), 1.7e9)
        self.assertGreater(value(after, "shardproxy_plan_cache_hits_total") +
                           value(after, "shardproxy_plan_cache_misses_total"), 0)
        self.assertEqual(len([k for k in after if k[0] == "shardproxy_build_info"]), 1)
        # An open session in a transaction shows as authenticated, in_transaction, pinned and under its user.
        conn = self.proxy.connect(autocommit=False)
        try:
            rows(conn, f"SELECT body FROM {t} WHERE conv_id = 1")
            live = parse_metrics(self.scrape())
            for state in ("open", "authenticated", "in_transaction", "pinned"):
                self.assertGreaterEqual(value(live, "shardproxy_client_connections", state=state), 1, state)
            self.assertGreaterEqual(value(live, "shardproxy_user_connections", user="app"), 1)
            conn.rollback()
        finally:
            conn.close()
        promtool = shutil.which("promtool")
        self.assertIsNotNone(promtool, "promtool not installed (Debian package prometheus, scripts/install-deps.sh)")
        check = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True,
                               timeout=60)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)

    def test_2_http_edges(self):
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(self.url("/other"), timeout=10)
        self.assertEqual(e.exception.code, 404)
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(urllib.request.Request(self.url("/metrics"), data=b"x", method="POST"), timeout=10)
        self.assertEqual(e.exception.code, 405)
        # A request head larger than 8 KiB gets 431 and the connection is closed.
        big = urllib.request.Request(self.url("/metrics"), headers={"X-Filler": "a" * 9000})
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(big, timeout=10)
        self.assertEqual(e.exception.code, 431)
        # A client that sends nothing is cut off after the 5 s request timeout.
        with socket.create_connection((HOST, self.metrics_port), timeout=15) as s:
            started = time.monotonic()
            self.assertEqual(s.recv(100), b"")
            self.assertLess(time.monotonic() - started, 12)

    def test_3_slow_log_and_digests(self):
        self.admin("RESET DIGESTS")
        self.run_known_statements()
        t = self.table.name
        refusal = f"UPDATE {t} SET body = ?"
        entries = self.slow_log_entries(lambda es: any(e["digest"] == refusal for e in es))
        mine = [e for e in entries if e["table"] == t]
        scatter = [e for e in mine if e["plan"] == "scatter"]
        self.assertTrue(scatter, "no scatter in the slow log")
        e = scatter[-1]
        self.assertEqual(e["user"], "app")
        self.assertTrue(e["client"].startswith("127.0.0.1:"))
        self.assertEqual(e["digest"], f"SELECT COUNT ( * ) FROM {t}")
        self.assertEqual(e["rows"], 1)
        self.assertEqual(len(e["shards"]), 16)
        self.assertEqual(sum(s["rows"] for s in e["shards"]), 16)  # every shard sends its COUNT row
        self.assertTrue(all(s["ms"] >= 0 for s in e["shards"]))
        self.assertEqual(sorted({s["backend"] for s in e["shards"]}), ["db0", "db1"])
        inserts = [x for x in mine if x["digest"].startswith("INSERT")]
        self.assertTrue(inserts)
        for x in inserts:
            self.assertNotIn("secret", x["statement"])  # values masked by default
            self.assertIn("VALUES (?, ?, ?)", x["statement"])
        refused = [x for x in entries if x["plan"] == "refused" and x["digest"] == f"UPDATE {t} SET body = ?"]
        self.assertEqual(refused[-1]["error"], 9101)
        self.assertIsNone(refused[-1]["table"])

        digests = {r[0]: r for r in self.admin("SHOW DIGESTS")}
        count_row = digests[f"SELECT COUNT ( * ) FROM {t}"]
        self.assertEqual(int(count_row[1]), 1)  # count
        self.assertEqual(int(count_row[3]), 1)  # rows
        self.assertEqual(float(count_row[4]), 16.0)  # avg_shards
        self.assertGreater(float(count_row[7]), 0)  # p50_ms
        self.assertLessEqual(float(count_row[8]), float(count_row[9]))  # p99_ms <= max_ms
        insert_row = digests[f"INSERT INTO {t} ( conv_id , seq , body ) VALUES ( ? , ? , ? )"]
        self.assertEqual(int(insert_row[1]), 3)
        refused_row = digests[f"UPDATE {t} SET body = ?"]
        self.assertEqual(int(refused_row[2]), 1)  # errors
        # The scatter's shard times: which shard answered slowest, its p99, and all 16 shards.
        self.assertRegex(count_row[12], r"^\d\d@db[01]$")  # slowest_shard
        self.assertGreater(float(count_row[13]), 0)  # slowest_shard_p99_ms
        self.assertLessEqual(float(count_row[13]), float(count_row[9]) + 0.001)  # within the statement's time
        parts = count_row[14].split("; ")  # shard_times
        self.assertEqual(len(parts), 16)
        self.assertRegex(parts[0], r"^\d\d@db[01] avg [0-9.]+ max [0-9.]+ ms \(n 1, slowest [01]\)$")
        self.assertEqual(sum(int(p.rsplit("slowest ", 1)[1].rstrip(")")) for p in parts), 1)
        self.assertEqual(insert_row[12], "-")  # routed: no shard times
        # The names for the same commands.
        by_alias = self.admin("SHOW QUERY DIGEST LIMIT 2")
        self.assertEqual(len(by_alias), 2)
        self.assertEqual(len(by_alias[0]), 15)
        top = self.admin("SHOW DIGESTS LIMIT 2")
        self.assertEqual(len(top), 2)
        self.assertGreaterEqual(float(top[0][5]), float(top[1][5]))  # sorted by total_ms
        stats = dict(self.admin("SHOW STATS"))
        self.assertEqual(float(stats[f'shardproxy_statements_total{{table="{t}",plan="scatter",outcome="ok"}}']),
                         self.runs)
        self.assertIn('shardproxy_statement_duration_seconds_count{plan="route"}', stats)
        self.assertFalse([k for k in stats if "_bucket" in k])
        self.admin("RESET QUERY DIGEST")
        self.assertNotIn(f"SELECT COUNT ( * ) FROM {t}", {r[0] for r in self.admin("SHOW QUERY DIGEST")})

    def test_4_slow_log_reopens_on_sighup(self):
        rotated = self.slow_path + ".1"
        os.replace(self.slow_path, rotated)
        self.proxy.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.slow_path) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertTrue(os.path.exists(self.slow_path), "SIGHUP did not reopen the slow-query log")
        conn = self.proxy.connect()
        try:
            rows(conn, f"SELECT body FROM {self.table.name} WHERE conv_id = 424242")
        finally:
            conn.close()
        wanted = f"SELECT body FROM {self.table.name} WHERE conv_id = ?"
        entries = self.slow_log_entries(lambda es: any(e["statement"] == wanted for e in es))
        self.assertIn(wanted, [e["statement"] for e in entries])

    def wait_for(self, name, more_than, **labels):
        """A scrape once the series exceeds `more_than` (recorded just after the answer); at most 10 s."""
        deadline = time.monotonic() + 10
        while True:
            samples = parse_metrics(self.scrape())
            if value(samples, name, **labels) > more_than or time.monotonic() > deadline:
                return samples

    def test_5_kills_timeouts_and_reloads(self):
        t = self.table.name
        before = parse_metrics(self.scrape())
        # KILL: one session kills another.
        victim, killer = self.proxy.connect(), self.proxy.connect()
        try:
            victim_id = rows(victim, "SELECT CONNECTION_ID()")[0][0]
            rows(killer, f"KILL {victim_id}")
        finally:
            killer.close()
            victim.close()
        after = self.wait_for("shardproxy_kills_total", value(before, "shardproxy_kills_total"))
        self.assertEqual(value(after, "shardproxy_kills_total") - value(before, "shardproxy_kills_total"), 1)
        # A shard slower than scatter.shard_timeout_ms (1 s): conv_id 3's shard sleeps 3 s.
        conn = self.proxy.connect()
        try:
            rows(conn, f"INSERT INTO {t} (conv_id, seq, body) VALUES (3, 1, 'slow')")
            code, _ = error_of(lambda: rows(conn, f"SELECT COUNT(*) FROM {t} WHERE SLEEP(IF(conv_id = 3, 3, 0)) = 0"))
            self.assertEqual(code, 9003)
        finally:
            conn.close()
        after = self.wait_for("shardproxy_shard_timeouts_total", value(before, "shardproxy_shard_timeouts_total"))
        self.assertEqual(value(after, "shardproxy_shard_timeouts_total") -
                         value(before, "shardproxy_shard_timeouts_total"), 1)
        self.assertEqual(value(after, "shardproxy_statement_errors_total", code="9003") -
                         value(before, "shardproxy_statement_errors_total", code="9003"), 1)
        # Reloads: an unchanged map counts as neither, a broken one as refused, a new version as applied.
        map_path = os.path.join(self.proxy.dir, "map.yaml")
        with open(map_path) as f:
            good = f.read()
        self.admin("RELOAD SHARD MAP")
        with open(map_path, "w") as f:
            f.write(good.replace("shards: 16", "shards: \"16\""))
        with self.assertRaises(pymysql.err.MySQLError):
            self.admin("RELOAD SHARD MAP")
        with open(map_path, "w") as f:
            f.write(good.replace("version: 1", "version: 2"))
        self.assertEqual(self.admin("RELOAD SHARD MAP")[0][0], "applied")
        after = parse_metrics(self.scrape())
        for result, n in (("refused", 1), ("applied", 1)):
            self.assertEqual(value(after, "shardproxy_shard_map_reloads_total", result=result) -
                             value(before, "shardproxy_shard_map_reloads_total", result=result), n, result)
        self.assertEqual(value(after, "shardproxy_shard_map_version"), 2)
        self.assertGreaterEqual(value(after, "shardproxy_shard_map_last_reload_timestamp_seconds"),
                                value(before, "shardproxy_shard_map_last_reload_timestamp_seconds"))


if __name__ == "__main__":
    unittest.main()
