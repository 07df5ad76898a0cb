"""A burst of clients at an empty pool (backends[].max_connecting).

A proxy of its own (helpers of scatter_failure_proxy.py) whose pools may have
one connect in flight per worker (max_connecting: 2, two workers) and up to
32 connections each. 48 clients send SELECT SLEEP(0.3) at once to the empty
pool: each needs a connection of its own. The connects run one at a time per
worker, and each one that ends wakes a waiting statement to start the next,
so the pool grows to what the burst needs instead of serving it from the
first connections in turn (48 x 0.3 s would pass the pool's 10 s wait).
Checked: every statement answers, the whole burst within 8 s, and the
backend saw the pool grow past the connect limit (at least 20 of the
burst's statements run at once).
"""
import threading
import time
import unittest

import pymysql

import scatter_failure_proxy as sf

CLIENTS = 48


def proxy_sessions(port):
    conn = sf.direct(port)
    try:
        return sf.rows(conn, "SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                             "WHERE USER = 'proxy' AND INFO LIKE 'SELECT SLEEP(0.3)%'")[0][0]
    finally:
        conn.close()


class PoolConnectBurstTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.table = sf.ShardedTable("it_burst")
        cls.table.create()
        cls.run_ = sf.ProxyRun("pool_connect_burst", cls.table, {"multi_shard_writes": "refuse"},
                               max_connections=64, backend_extra=", max_connecting: 2")
        cls.run_.start()

    @classmethod
    def tearDownClass(cls):
        cls.run_.stop()
        cls.table.drop()

    def test_a_burst_at_an_empty_pool_is_served_by_connects_one_at_a_time(self):
        conns = [self.run_.connect() for _ in range(CLIENTS)]
        errors, answers = [], []
        peak = [0]
        start = threading.Barrier(CLIENTS + 1)

        def one(conn):
            start.wait()
            try:
                with conn.cursor() as cur:
                    cur.execute("SELECT SLEEP(0.3)")
                    answers.append(cur.fetchall())
            except pymysql.err.MySQLError as e:
                errors.append(e.args)

        threads = [threading.Thread(target=one, args=(c,)) for c in conns]
        for t in threads:
            t.start()
        began = time.monotonic()
        start.wait()
        while any(t.is_alive() for t in threads) and time.monotonic() - began < 30:
            peak[0] = max(peak[0], proxy_sessions(sf.DB0_PORT))
            time.sleep(0.05)
        for t in threads:
            t.join(30)
        took = time.monotonic() - began
        for c in conns:
            c.close()
        self.assertEqual(errors, [], "statements failed in the burst")
        self.assertEqual(len(answers), CLIENTS)
        self.assertLess(took, 8.0, f"the burst took {took:.1f} s: the pool did not grow")
        self.assertGreaterEqual(peak[0], 20, f"at most {peak[0]} of the burst's statements ran at once on db0")
        print(f"burst of {CLIENTS}: {took:.2f} s, up to {peak[0]} running at once on db0", flush=True)


if __name__ == "__main__":
    unittest.main()
