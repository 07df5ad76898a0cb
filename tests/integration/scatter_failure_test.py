"""Scatter-gather under failure (issue 4), against the real cluster with the
test's own shardproxy (scatter_failure_proxy.py):
- scatter COUNT(*) over the 16 tables returns one row, the sum of the direct counts;
- a backend mariadbd SIGKILLed in the middle of a scatter: the client gets an error
  naming a shard of that backend, never rows passed off as complete; other sessions
  keep being served, and everything works again once scripts/cluster restarted it;
- a shard slower than scatter.shard_timeout_ms fails the statement with 9003 naming it,
  and its query is killed on the server;
- a merge needing more than scatter.max_merge_bytes fails with a clear error.

Run by ctest (integration.scatter_failure) or by hand from tests/integration:
  SP_PROXY_BINARY=<build>/proxy/shardproxy SP_DB0_PORT=.. SP_DB1_PORT=.. SP_CLUSTER_DIR=.. \\
      /usr/bin/python3 -m unittest -v scatter_failure_test
"""
import re
import threading
import time
import unittest

import pymysql

import scatter_failure_proxy as sf

ROWS_PER_SHARD = [3, 0, 5, 1, 2, 7, 0, 4, 6, 1, 0, 2, 3, 9, 1, 2]  # some shards empty on purpose
SLEEP_PER_ROW = 0.15


def run_in_thread(fn):
    outcome = {}

    def body():
        try:
            outcome["result"] = fn()
        except Exception as e:  # noqa: BLE001 - inspected by the test
            outcome["error"] = e

    thread = threading.Thread(target=body)
    thread.start()
    return outcome, thread


class ScatterFailure(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.table = sf.ShardedTable("it_sf")
        cls.table.create()
        cls.keys = {}
        for shard, count in enumerate(ROWS_PER_SHARD):
            keys = [shard + 16 * k for k in range(1, count + 1)]
            cls.keys[shard] = keys
            conn = sf.direct(sf.backend_port(shard))
            try:
                for key in keys:
                    sf.rows(conn, f"INSERT INTO {cls.table.physical(shard)} (conv_id, seq, body) VALUES (%s, 1, 'x')",
                            (key,))
            finally:
                conn.close()
        cls.proxy = sf.ProxyRun("scatter_failure", cls.table, {"shard_timeout_ms": 1000, "max_merge_bytes": 1048576})
        cls.proxy.start()

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        cls.table.drop()

    def direct_total(self):
        total = 0
        for shard in range(sf.SHARDS):
            conn = sf.direct(sf.backend_port(shard))
            try:
                total += sf.rows(conn, f"SELECT COUNT(*) FROM {self.table.physical(shard)}")[0][0]
            finally:
                conn.close()
        return total

    def test_count_over_16_tables_is_one_row_with_the_sum(self):
        conn = self.proxy.connect()
        try:
            expected = self.direct_total()
            self.assertEqual(expected, sum(ROWS_PER_SHARD))
            result = sf.rows(conn, f"SELECT COUNT(*) FROM {self.table.name}")
            self.assertEqual(result, ((expected,),))
            result = sf.rows(conn, f"SELECT COUNT(*) AS n FROM {self.table.name} WHERE seq = 1")
            self.assertEqual(result, ((expected,),))
            # Every shard was asked: EXPLAIN SHARDS lists the 16 physical tables.
            plan = sf.rows(conn, f"EXPLAIN SHARDS SELECT COUNT(*) FROM {self.table.name}")
            tables = sorted(r[2] for r in plan if r[2] != "-")
            self.assertEqual(tables, [self.table.physical(s) for s in range(sf.SHARDS)])
        finally:
            conn.close()

    def slow_scatter(self, conn, sql):
        return sf.rows(conn, sql)

    def wait_for_running(self, port, marker):
        db = sf.direct(port)
        try:
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                found = sf.rows(db, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE %s "
                                    "AND ID <> CONNECTION_ID()", (f"%{marker}%",))[0][0]
                if found:
                    return
                time.sleep(0.05)
            self.fail(f"no statement with {marker} ever ran on port {port}")
        finally:
            db.close()

    def test_backend_killed_mid_scatter(self):
        marker = f"sfkill{int(time.time() * 1000) % 100000}"
        aggregate = self.proxy.connect(read_timeout=60)
        row_query = self.proxy.connect(read_timeout=60)
        bystander = self.proxy.connect()
        restarted = False
        try:
            agg_sql = (f"SELECT COUNT(*), '{marker}a' AS m FROM {self.table.name} WHERE SLEEP({SLEEP_PER_ROW}) = 0")
            row_sql = (f"SELECT conv_id, '{marker}r' AS m FROM {self.table.name} WHERE SLEEP({SLEEP_PER_ROW}) = 0")
            agg, agg_thread = run_in_thread(lambda: self.slow_scatter(aggregate, agg_sql))
            rows_out, rows_thread = run_in_thread(lambda: self.slow_scatter(row_query, row_sql))
            # Both scatters run on db1 before it dies. One may still be opening
            # connections to db1's other shards then: it fails as "backend db1
            # unavailable", also an error naming db1, never rows.
            self.wait_for_running(sf.DB1_PORT, f"{marker}a")
            self.wait_for_running(sf.DB1_PORT, f"{marker}r")
            sf.kill_backend(sf.DB1_PORT)
            for outcome, thread, what in ((agg, agg_thread, "aggregate"), (rows_out, rows_thread, "row query")):
                thread.join(60)
                self.assertFalse(thread.is_alive(), f"the {what} was never answered")
                self.assertIn("error", outcome, f"{what}: expected an error, got rows {outcome.get('result')!r}")
                error = outcome["error"]
                self.assertIsInstance(error, pymysql.err.MySQLError, repr(error))
                message = error.args[1] if len(error.args) > 1 else str(error)
                # The shard named is one of db1's (08-15), and the backend is named
                # too; or db1 itself, for a shard whose connection was being opened.
                self.assertRegex(message, r"shard (0[89]|1[0-5]) \(" + re.escape(self.table.name) +
                                 r"_\d\d on backend db1\)|backend db1 \(127\.0\.0\.1:\d+\) unavailable",
                                 f"{what}: {message}")
            # Statements that need only db0 are still served, by old and new sessions.
            self.assertEqual(sf.rows(bystander, f"SELECT COUNT(*) FROM {self.table.name} WHERE conv_id = {self.keys[2][0]}"),
                             ((1,),))
            fresh = self.proxy.connect()
            self.assertEqual(sf.rows(fresh, "SELECT 1"), ((1,),))
            fresh.close()
            # A scatter while db1 is down: an error naming a db1 shard, never a partial count.
            errno, message = sf.error_of(lambda: sf.rows(bystander, f"SELECT COUNT(*) FROM {self.table.name}"))
            self.assertIn("backend db1", message)
            sf.restart_backend(sf.DB1_PORT)
            restarted = True
            # Back: the full count again, on an old session and a new one.
            expected = self.direct_total()
            deadline = time.monotonic() + 30
            while True:
                try:
                    got = sf.rows(bystander, f"SELECT COUNT(*) FROM {self.table.name}")
                    break
                except pymysql.err.MySQLError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.3)
            self.assertEqual(got, ((expected,),))
            again = self.proxy.connect()
            self.assertEqual(sf.rows(again, f"SELECT COUNT(*) FROM {self.table.name}"), ((expected,),))
            again.close()
            self.assertTrue(self.proxy.alive(), self.proxy.log_tail())
        finally:
            if not restarted:
                sf.restart_backend(sf.DB1_PORT)
            for c in (aggregate, row_query, bystander):
                try:
                    c.close()
                except Exception:  # noqa: BLE001 - a connection the failure already closed
                    pass

    def test_slow_shard_times_out(self):
        conn = self.proxy.connect()
        try:
            slow_key = self.keys[9][0]
            start = time.monotonic()
            errno, message = sf.error_of(lambda: sf.rows(
                conn, f"SELECT COUNT(*) FROM {self.table.name} WHERE SLEEP(IF(conv_id = {slow_key}, 4, 0)) = 0"))
            elapsed = time.monotonic() - start
            self.assertEqual(errno, 9003, message)
            self.assertIn(f"shard 09 ({self.table.physical(9)} on backend db1)", message)
            self.assertIn("1000 ms", message)
            self.assertLess(elapsed, 3.5, "the timeout did not cut the wait short")
            # The shard's query was killed on its server, not left to sleep out its 4 s.
            d = sf.direct(sf.DB1_PORT)
            try:
                while True:
                    running = sf.rows(d, "SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                                         "WHERE INFO LIKE '%SLEEP(IF(conv_id%' AND ID <> CONNECTION_ID()")[0][0]
                    if running == 0:
                        break
                    self.assertLess(time.monotonic() - start, 3.5, "the timed-out shard query still runs")
                    time.sleep(0.1)
            finally:
                d.close()
            # The session and the proxy go on; the result is right again.
            self.assertEqual(sf.rows(conn, f"SELECT COUNT(*) FROM {self.table.name}"), ((sum(ROWS_PER_SHARD),),))
        finally:
            conn.close()

    def test_merge_memory_cap(self):
        conn = self.proxy.connect()
        try:
            # 2,080 groups with 590-byte values: well over the 1 MiB cap of this proxy.
            big = [(sh, 100000 + sh + 16 * i) for sh in range(sf.SHARDS) for i in range(130)]
            by_shard = {}
            for shard, key in big:
                by_shard.setdefault(shard, []).append(key)
            for shard, keys in by_shard.items():
                d = sf.direct(sf.backend_port(shard))
                try:
                    values = ", ".join(f"({k}, 2, REPEAT('b', 590))" for k in keys)
                    sf.rows(d, f"INSERT INTO {self.table.physical(shard)} (conv_id, seq, body) VALUES {values}")
                finally:
                    d.close()
            try:
                errno, message = sf.error_of(lambda: sf.rows(
                    conn, f"SELECT conv_id, body, COUNT(*) FROM {self.table.name} GROUP BY conv_id, body"))
                self.assertIn("scatter.max_merge_bytes", message)
                self.assertIn("1048576 bytes", message)
                # A smaller merge still works on the same session.
                self.assertEqual(sf.rows(conn, f"SELECT COUNT(*) FROM {self.table.name} WHERE seq = 2"),
                                 ((len(big),),))
            finally:
                for shard in by_shard:
                    d = sf.direct(sf.backend_port(shard))
                    try:
                        sf.rows(d, f"DELETE FROM {self.table.physical(shard)} WHERE seq = 2")
                    finally:
                        d.close()
        finally:
            conn.close()


if __name__ == "__main__":
    unittest.main()
