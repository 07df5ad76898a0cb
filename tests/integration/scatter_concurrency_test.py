"""Concurrent statements that each borrow one connection per shard (scatter
SELECTs, split INSERTs) on small pools: they must never hold part of what they
need while waiting for the rest (hold-and-wait until the pool timeout), and a
statement that can never fit the pool is refused at once with the setting to
change. Runs its own proxies (scatter_failure_proxy.py) on the test cluster.
"""
import threading
import time
import unittest

import pymysql

import scatter_failure_proxy as sf

THREADS = 24
SECONDS = 6


class SmallPools(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.table = sf.ShardedTable("it_scatter_conc")
        cls.table.create()
        # 16 connections per backend over 2 worker threads: 8 per worker, exactly
        # what one scatter over the 8 shards of a backend needs.
        cls.proxy = sf.ProxyRun("scatter_concurrency", cls.table,
                                {"multi_shard_writes": "best_effort"}, max_connections=16)
        cls.proxy.start()
        conn = cls.proxy.connect()
        try:
            values = ", ".join(f"({k}, 0, 'seed')" for k in range(sf.SHARDS))
            sf.rows(conn, f"INSERT INTO {cls.table.name} (conv_id, seq, body) VALUES {values}")
        finally:
            conn.close()

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        cls.table.drop()

    def test_concurrent_scatters_and_split_writes_all_complete(self):
        done, errors = [0] * THREADS, []
        stop_at = time.monotonic() + SECONDS

        def run(index):
            try:
                conn = self.proxy.connect()
            except pymysql.err.MySQLError as e:
                errors.append(f"connect: {e}")
                return
            seq = 1
            try:
                while time.monotonic() < stop_at:
                    if index % 3 == 0:
                        # A split INSERT over all 16 shards.
                        values = ", ".join(f"({k}, {index * 100000 + seq}, 'w')" for k in range(sf.SHARDS))
                        sf.rows(conn, f"INSERT INTO {self.table.name} (conv_id, seq, body) VALUES {values}")
                        seq += 1
                    else:
                        count = sf.rows(conn, f"SELECT COUNT(*) FROM {self.table.name} WHERE body = 'seed'")
                        if count != ((sf.SHARDS,),):
                            errors.append(f"wrong count {count}")
                    done[index] += 1
            except pymysql.err.MySQLError as e:
                errors.append(str(e)[:200])
            finally:
                conn.close()

        threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(SECONDS + 60)
        self.assertEqual(errors, [])
        self.assertTrue(all(n > 0 for n in done), f"a thread completed nothing: {done}")
        # Every split write landed completely: each shard holds every written seq.
        writers = sum(done[i] for i in range(THREADS) if i % 3 == 0)
        for shard in range(sf.SHARDS):
            found = self.table.direct_rows(shard, columns="COUNT(*)")
            self.assertEqual(found, ((writers + 1,),), f"shard {shard}")

    def test_statement_that_cannot_fit_the_pool_is_refused_at_once(self):
        tiny = sf.ProxyRun("scatter_concurrency_tiny", self.table, {}, max_connections=10)
        tiny.start()
        try:
            conn = tiny.connect()
            try:
                started = time.monotonic()
                errno, message = sf.error_of(lambda: sf.rows(conn, f"SELECT COUNT(*) FROM {self.table.name}"))
                self.assertLess(time.monotonic() - started, 5, "refused only after waiting for the pool")
                self.assertEqual(errno, 1105, message)
                self.assertIn("needs 8 connections to backend db0 at once", message)
                self.assertIn("max_connections", message)
                self.assertEqual(sf.rows(conn, "SELECT 1"), ((1,),))  # the session goes on
            finally:
                conn.close()
        finally:
            tiny.stop()


if __name__ == "__main__":
    unittest.main()
