"""Overload part 1 (issue 32): the per-backend concurrency budget.

A proxy of its own (helpers of scatter_failure_proxy.py) in front of the shared
test cluster, with backends[db0].max_active_statements: 2. Concurrency is
counted on the backend itself (information_schema.PROCESSLIST of db0, read
directly every 10 ms), never from the proxy's own figures:
- 8 concurrent SELECT SLEEP(0.5) (text) and 6 prepared ones (COM_STMT_EXECUTE)
  all succeed, and at most 2 ever run on db0 at once (2 do);
- after RELOAD with overload.queue_timeout_ms 300, the excess gets 9145
  naming the server, the budget and the key; with max_queued_per_backend 2,
  9146; SHOW OVERLOAD and SHOW STATS count both;
- a user flooding 12 statements does not starve another user: the other's
  statement finishes before most of the flood.
"""
import re
import struct
import threading
import time
import unittest

import pymysql

import scatter_failure_proxy as sf

ER_OVERLOAD_TIMEOUT = 9145
ER_OVERLOAD_QUEUE_FULL = 9146
BUDGET = 2
OTHER_USER, OTHER_PASSWORD = "it_other", "it_other_pw"


def overload_section(timeout_ms, max_queued):
    return f"overload:\n  queue_timeout_ms: {timeout_ms}\n  max_queued_per_backend: {max_queued}\n"


def write_config(run, timeout_ms, max_queued):
    with open(run.config_path) as f:
        text = f.read()
    text = re.sub(r"overload:\n(  .*\n)+", "", text)
    text = text.replace("users:\n", overload_section(timeout_ms, max_queued) + "users:\n"
                        f"  - {{name: {OTHER_USER}, password: {OTHER_PASSWORD}, default_database: im}}\n"
                        if OTHER_USER not in text else overload_section(timeout_ms, max_queued) + "users:\n", 1)
    # The budget on db0 only; db1 keeps none.
    text = re.sub(r"(- \{name: db0, [^\n]*?)\}\n", lambda m: m.group(1) + (
        f", max_active_statements: {BUDGET}}}\n" if "max_active_statements" not in m.group(1) else "}\n"), text, 1)
    with open(run.config_path, "w") as f:
        f.write(text)


class Monitor:
    """Counts, on db0 directly, the statements carrying `marker` that run now."""

    def __init__(self, marker):
        self.marker = marker
        self.peak = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self):
        conn = sf.direct(sf.DB0_PORT)
        # Only statements sleeping now: a prepare of the same text (not budgeted)
        # or a statement whose answer was just sent (the server lists it a moment
        # longer) is no statement in flight.
        sql = ("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE %s "
               "AND INFO NOT LIKE '%%PROCESSLIST%%' AND STATE = 'User sleep'")
        while not self._stop.is_set():
            n = sf.rows(conn, sql, (f"%{self.marker}%",))[0][0]
            self.peak = max(self.peak, n)
            self.samples += 1
            time.sleep(0.01)
        conn.close()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def run_all(functions):
    """Runs each function on its own thread; returns their results or exceptions, in order."""
    results = [None] * len(functions)

    def call(i):
        try:
            results[i] = functions[i]()
        except Exception as e:  # noqa: BLE001 - the test inspects it
            results[i] = e

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(functions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def prepared_execute(conn, sql):
    """COM_STMT_PREPARE + COM_STMT_EXECUTE (no parameters) by hand; returns the rows read."""
    conn._execute_command(0x16, sql)
    ok = conn._read_packet().get_all_data()
    stmt_id, columns, params = struct.unpack("<IHH", ok[1:9])
    for count in (params, columns):
        for _ in range(count + 1 if count else 0):  # definitions, then EOF (no DEPRECATE_EOF)
            conn._read_packet()
    conn._execute_command(0x17, struct.pack("<IBI", stmt_id, 0, 1))
    packet = conn._read_packet()  # column count, or ERR (raises)
    eofs, rows = 0, 0
    while eofs < 2:
        data = conn._read_packet().get_all_data()
        if data[0] == 0xFE and len(data) < 9:
            eofs += 1
        elif eofs == 1:
            rows += 1
    return rows


class OverloadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.run_ = sf.ProxyRun("overload", sf.ShardedTable("it_overload_unused"), {"multi_shard_writes": "refuse"})
        write_config(cls.run_, 10000, 100)
        cls.run_.start()

    @classmethod
    def tearDownClass(cls):
        cls.run_.stop()

    def admin(self):
        return pymysql.connect(host=sf.HOST, port=self.run_.admin_port, user="admin", password="admin_pw",
                               connect_timeout=10, read_timeout=60)

    def reload(self, timeout_ms, max_queued):
        write_config(self.run_, timeout_ms, max_queued)
        with self.admin() as a:
            sf.rows(a, "RELOAD SHARD MAP")
            row = [r for r in sf.rows(a, "SHOW OVERLOAD") if r[0] == "db0"][0]
        self.assertEqual(int(row[1]), BUDGET)
        self.assertEqual(int(row[12]), timeout_ms)
        self.assertEqual(int(row[13]), max_queued)

    def overload_row(self):
        with self.admin() as a:
            return [r for r in sf.rows(a, "SHOW OVERLOAD") if r[0] == "db0"][0]

    def sleep_through_proxy(self, marker, seconds, user=None):
        def go():
            kw = {"user": user[0], "password": user[1]} if user else {}
            conn = pymysql.connect(host=sf.HOST, port=self.run_.port, database="im", autocommit=True,
                                   connect_timeout=10, read_timeout=60,
                                   **({"user": sf.APP_USER, "password": sf.APP_PASSWORD} | kw))
            try:
                sf.rows(conn, f"SELECT SLEEP({seconds}) /* {marker} */")
                return time.monotonic()
            finally:
                conn.close()
        return go

    def test_1_text_statements_wait_for_the_budget_and_all_succeed(self):
        self.reload(10000, 100)
        started = time.monotonic()
        with Monitor("ovl_text") as m:
            results = run_all([self.sleep_through_proxy("ovl_text", 0.5)] * 8)
        elapsed = time.monotonic() - started
        errors = [r for r in results if isinstance(r, Exception)]
        self.assertEqual(errors, [])
        self.assertGreater(m.samples, 50)
        self.assertEqual(m.peak, BUDGET, f"peak concurrency on db0: {m.peak}")
        self.assertGreaterEqual(elapsed, 8 / BUDGET * 0.5 - 0.1)  # four rounds of two
        print(f"\n  text: 8 x SLEEP(0.5), budget {BUDGET}: peak {m.peak} on db0, {elapsed:.2f} s", flush=True)

    def test_2_prepared_statements_pass_the_same_budget(self):
        self.reload(10000, 100)

        def go():
            conn = self.run_.connect()
            try:
                return prepared_execute(conn, "SELECT SLEEP(0.4) /* ovl_prepared */")
            finally:
                conn.close()
        before = int(self.overload_row()[5])
        with Monitor("ovl_prepared") as m:
            results = run_all([go] * 6)
        self.assertEqual(results, [1] * 6)
        self.assertEqual(m.peak, BUDGET, f"peak concurrency on db0: {m.peak}")
        self.assertGreaterEqual(int(self.overload_row()[5]) - before, 3)  # waited
        print(f"\n  prepared: 6 x SLEEP(0.4): peak {m.peak} on db0", flush=True)

    def test_3_excess_waits_then_gets_9145(self):
        self.reload(300, 100)
        before = int(self.overload_row()[7])
        results = run_all([self.sleep_through_proxy("ovl_timeout", 1)] * 6)
        errors = [r for r in results if isinstance(r, Exception)]
        self.assertEqual(len(errors), 6 - BUDGET, results)
        for e in errors:
            self.assertIsInstance(e, pymysql.err.OperationalError)
            self.assertEqual(e.args[0], ER_OVERLOAD_TIMEOUT, e.args)
            for word in ("db0", "overload.queue_timeout_ms = 300", "max_active_statements", "retry"):
                self.assertIn(word, e.args[1])
        self.assertEqual(int(self.overload_row()[7]) - before, 6 - BUDGET)
        with self.admin() as a:
            stats = {r[0]: r for r in sf.rows(a, "SHOW STATS")}
        self.assertTrue(any("shardproxy_backend_queue_rejections_total" in k and "timeout" in k for k in stats),
                        [k for k in stats if "queue" in k])

    def test_4_a_full_queue_refuses_with_9146(self):
        self.reload(10000, 2)
        results = run_all([self.sleep_through_proxy("ovl_full", 0.5)] * 6)
        errors = [r for r in results if isinstance(r, Exception)]
        self.assertEqual(len(errors), 2, results)
        for e in errors:
            self.assertEqual(e.args[0], ER_OVERLOAD_QUEUE_FULL, e.args)
            self.assertIn("overload.max_queued_per_backend", e.args[1])
        self.assertGreaterEqual(int(self.overload_row()[8]), 2)

    def test_5_a_flooding_user_does_not_starve_another(self):
        self.reload(10000, 100)
        flood = [self.sleep_through_proxy("ovl_flood", 0.3)] * 12

        def other():
            time.sleep(0.15)  # the flood holds both slots and queues the rest first
            return ("other", self.sleep_through_proxy("ovl_other", 0.3, (OTHER_USER, OTHER_PASSWORD))())
        results = run_all(flood + [other])
        self.assertEqual([r for r in results if isinstance(r, Exception)], [])
        other_done = results[-1][1]
        flood_before = sum(1 for t in results[:-1] if t < other_done)
        # FIFO would finish it last (12 before it); its fair share admits it
        # at the first freed slot: only the first round of the flood ends before.
        self.assertLessEqual(flood_before, 3, f"{flood_before} flood statements finished first")
        print(f"\n  fairness: {flood_before} of 12 flood statements finished before the other user's", flush=True)

    # ---- statement limits per user and per digest (part 2) ----

    def other_conn(self):
        return pymysql.connect(host=sf.HOST, port=self.run_.port, user=OTHER_USER, password=OTHER_PASSWORD,
                               database="im", autocommit=True, connect_timeout=10, read_timeout=60)

    def limit_rows(self):
        with self.admin() as a:
            return {r[1]: r for r in sf.rows(a, "SHOW LIMITS")}

    def set_limit(self, sql):
        with self.admin() as a:
            sf.rows(a, sql)

    def test_6_user_and_digest_concurrency_limits(self):
        self.reload(10000, 100)
        self.set_limit(f"SET LIMIT FOR USER {OTHER_USER} max_concurrent = 2")
        try:
            other = self.sleep_through_proxy("lim_user", 0.4, (OTHER_USER, OTHER_PASSWORD))
            results = run_all([other] * 5 + [self.sleep_through_proxy("lim_app", 0.1)])
            errors = [r for r in results if isinstance(r, Exception)]
            self.assertEqual(len(errors), 3, results)  # the app user's statement is not limited
            for e in errors:
                self.assertEqual(e.args[0], 9161, e.args)
                self.assertIn(f"user '{OTHER_USER}' has 2 statements running", e.args[1])
                self.assertIn("statement_limits max_concurrent 2", e.args[1])
            # The prepared path: COM_STMT_EXECUTE passes the same limit.
            holders = [threading.Thread(target=other) for _ in range(2)]
            for t in holders:
                t.start()
            time.sleep(0.15)
            conn = self.other_conn()
            try:
                with self.assertRaises(pymysql.err.OperationalError) as e:
                    prepared_execute(conn, "SELECT 1")
                self.assertEqual(e.exception.args[0], 9161)
            finally:
                conn.close()
                for t in holders:
                    t.join()
            row = self.limit_rows()[OTHER_USER]
            self.assertEqual((row[0], row[3], row[6]), ("user", "2", "0"), row)  # nothing left in flight
            self.assertEqual(int(row[9]), 4, row)
        finally:
            self.set_limit(f"SET LIMIT FOR USER {OTHER_USER}")  # removed
        self.assertNotIn(OTHER_USER, self.limit_rows())
        # A digest: every SELECT SLEEP(?) of any user, one at a time.
        self.set_limit("SET LIMIT FOR DIGEST 'SELECT SLEEP(1)' max_concurrent = 1")
        try:
            results = run_all([self.sleep_through_proxy("lim_digest", 0.4)] * 3)
            errors = [r for r in results if isinstance(r, Exception)]
            self.assertEqual(len(errors), 2, results)
            for e in errors:
                self.assertEqual(e.args[0], 9161, e.args)
                self.assertIn("digest 'SELECT SLEEP ( ? )'", e.args[1])  # as SHOW DIGESTS writes it
        finally:
            self.set_limit("SET LIMIT FOR DIGEST 'SELECT SLEEP(1)'")

    def test_7_a_rate_limit_holds(self):
        rate = 50
        self.set_limit(f"SET LIMIT FOR USER {OTHER_USER} max_per_second = {rate}")
        ok, refused = [0], [0]
        stop = threading.Event()

        def hammer():
            conn = self.other_conn()
            try:
                while not stop.is_set():
                    try:
                        sf.rows(conn, "SELECT 1")
                        ok[0] += 1
                    except pymysql.err.OperationalError as e:
                        self.assertEqual(e.args[0], 9160, e.args)
                        self.assertIn(f"statement_limits max_per_second {rate}", e.args[1])
                        refused[0] += 1
            finally:
                conn.close()

        try:
            threads = [threading.Thread(target=hammer) for _ in range(4)]
            started = time.monotonic()
            for t in threads:
                t.start()
            time.sleep(3)
            stop.set()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - started
        finally:
            self.set_limit(f"SET LIMIT FOR USER {OTHER_USER}")
        allowed = rate * elapsed + rate  # the refill over the run plus the one second's worth it starts with
        self.assertGreater(refused[0], 0)
        self.assertLessEqual(ok[0], allowed * 1.05, f"{ok[0]} statements admitted, at most {allowed:.0f} allowed")
        print(f"\n  rate limit {rate}/s over {elapsed:.2f} s: {ok[0]} admitted ({ok[0] / allowed:.3f} of the "
              f"allowance incl. the first second's burst), {refused[0]} refused with 9160", flush=True)


if __name__ == "__main__":
    unittest.main()
