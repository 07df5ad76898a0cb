"""Multi-row INSERT / REPLACE whose rows land on several shards (issue 4, split
writes), against the real cluster with two proxies of the test's own
(scatter_failure_proxy.py): one with scatter.multi_shard_writes: refuse (the
default), one with best_effort. Every check of where rows landed is made
directly on the backends.

Run by ctest (integration.split_insert) or by hand from tests/integration:
  SP_PROXY_BINARY=<build>/proxy/shardproxy SP_DB0_PORT=.. SP_DB1_PORT=.. \\
      /usr/bin/python3 -m unittest -v split_insert_test
"""
import struct
import unittest

from pymysql.constants import COMMAND

import scatter_failure_proxy as sf


def shard_of(key):
    return key % sf.SHARDS


class SplitInsert(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.table = sf.ShardedTable("it_si")
        cls.table.create()
        cls.refuse = sf.ProxyRun("split_insert_refuse", cls.table, {"multi_shard_writes": "refuse"})
        # refuse: test_transaction_on_one_backend_is_atomic_per_statement checks that a
        # transaction's split write needing a second backend is refused (9120), the
        # policy before transactions.cross_backend became atomic by default.
        cls.best = sf.ProxyRun("split_insert_best_effort", cls.table, {"multi_shard_writes": "best_effort"},
                               sections="transactions:\n  cross_backend: refuse\n")
        cls.refuse.start()
        try:
            cls.best.start()
        except Exception:
            cls.refuse.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.refuse.stop()
        cls.best.stop()
        cls.table.drop()

    def setUp(self):
        for shard in range(sf.SHARDS):
            conn = sf.direct(sf.backend_port(shard))
            try:
                sf.rows(conn, f"DELETE FROM {self.table.physical(shard)}")
            finally:
                conn.close()

    def all_rows(self):
        """{shard: ((conv_id, seq, body), ...)} for the shards that hold rows, read directly."""
        out = {}
        for shard in range(sf.SHARDS):
            found = self.table.direct_rows(shard)
            if found:
                out[shard] = found
        return out

    def test_refuse_policy_refuses_with_the_shard_list(self):
        conn = self.refuse.connect()
        try:
            errno, message = sf.error_of(lambda: sf.rows(
                conn, f"INSERT INTO {self.table.name} (conv_id, seq) VALUES (1, 1), (2, 1), (9, 1)"))
            self.assertEqual(errno, 9109, message)
            self.assertIn("has rows for shards 01, 02, 09", message)
            self.assertIn("multi_shard_writes", message)
            self.assertEqual(self.all_rows(), {})
            # One shard is still fine.
            sf.rows(conn, f"INSERT INTO {self.table.name} (conv_id, seq) VALUES (1, 1), (17, 1)")
            self.assertEqual(self.all_rows(), {1: ((1, 1, ""), (17, 1, ""))})
        finally:
            conn.close()

    def test_best_effort_puts_every_row_on_its_shard(self):
        conn = self.best.connect()
        try:
            keys = [3, 8, 19, 24, 5, 15, 35, 4]  # both backends, several rows on some shards
            values = ", ".join(f"({k}, {i}, 'r{k}')" for i, k in enumerate(keys))
            with conn.cursor() as cur:
                affected = cur.execute(f"INSERT INTO {self.table.name} (conv_id, seq, body) VALUES {values}")
            self.assertEqual(affected, len(keys))
            expected = {}
            for i, k in enumerate(keys):
                expected.setdefault(shard_of(k), []).append((k, i, f"r{k}"))
            self.assertEqual(self.all_rows(), {s: tuple(sorted(r)) for s, r in expected.items()})
            # The proxy's scatter sees them all too.
            self.assertEqual(sf.rows(conn, f"SELECT COUNT(*) FROM {self.table.name}"), ((len(keys),),))
        finally:
            conn.close()

    def test_best_effort_insert_id_is_the_first_rows(self):
        conn = self.best.connect()
        try:
            with conn.cursor() as cur:
                # The first row goes to shard 05, whose ids are 5001 and up (shard 09's: 9001 and up).
                cur.execute(f"INSERT INTO {self.table.name} (conv_id, seq) VALUES (5, 1), (9, 1), (21, 1)")
                insert_id = cur.lastrowid
            ids = {s: self.table.direct_rows(s, "conv_id, id") for s in (5, 9)}
            first_id = ids[5][0][1]
            self.assertEqual(ids[5], ((5, first_id), (21, first_id + 1)))
            self.assertTrue(5000 < first_id < 6000 and 9000 < ids[9][0][1] < 10000, ids)
            self.assertEqual(insert_id, first_id)  # the id generated for the statement's first row
            self.assertEqual(sf.rows(conn, "SELECT LAST_INSERT_ID()"), ((first_id,),))
        finally:
            conn.close()

    def test_best_effort_failed_part_names_the_shard_and_keeps_the_others(self):
        d = sf.direct(sf.backend_port(10))
        try:
            sf.rows(d, f"INSERT INTO {self.table.physical(10)} (conv_id, seq, body) VALUES (10, 1, 'before')")
        finally:
            d.close()
        conn = self.best.connect()
        try:
            errno, message = sf.error_of(lambda: sf.rows(
                conn, f"INSERT INTO {self.table.name} (conv_id, seq, body) VALUES "
                      f"(1, 1, 'a'), (10, 1, 'dup'), (2, 1, 'b'), (11, 1, 'c'), (17, 1, 'd')"))
            self.assertEqual(errno, 9121, message)
            self.assertIn(f"Failed: shard 10 ({self.table.physical(10)} on backend db1): ERROR 1062", message)
            self.assertIn("Duplicate entry", message)
            self.assertIn("nothing was rolled back", message)
            self.assertIn(f"shard 01 ({self.table.physical(1)} on backend db0): 2 rows", message)
            self.assertIn(f"shard 02 ({self.table.physical(2)} on backend db0): 1 row", message)
            self.assertIn(f"shard 11 ({self.table.physical(11)} on backend db1): 1 row", message)
            self.assertEqual(self.all_rows(), {
                1: ((1, 1, "a"), (17, 1, "d")),
                2: ((2, 1, "b"),),
                10: ((10, 1, "before"),),
                11: ((11, 1, "c"),),
            })
            # The session goes on.
            self.assertEqual(sf.rows(conn, "SELECT 1"), ((1,),))
        finally:
            conn.close()

    def test_best_effort_every_part_failing_with_one_error_keeps_its_code(self):
        for shard, key in ((1, 1), (9, 9)):
            d = sf.direct(sf.backend_port(shard))
            try:
                sf.rows(d, f"INSERT INTO {self.table.physical(shard)} (conv_id, seq) VALUES ({key}, 1)")
            finally:
                d.close()
        conn = self.best.connect()
        try:
            errno, message = sf.error_of(lambda: sf.rows(
                conn, f"INSERT INTO {self.table.name} (conv_id, seq) VALUES (1, 1), (9, 1)"))
            self.assertEqual(errno, 1062, message)  # nothing written anywhere: the server's own error
            self.assertIn("Succeeded: none", message)
        finally:
            conn.close()

    def test_ignore_replace_and_on_duplicate_key_update(self):
        conn = self.best.connect()
        try:
            with conn.cursor() as cur:
                cur.execute(f"INSERT INTO {self.table.name} (conv_id, seq, body) VALUES (1, 1, 'a'), (2, 1, 'b')")
                affected = cur.execute(f"INSERT IGNORE INTO {self.table.name} (conv_id, seq, body) VALUES "
                                       f"(1, 1, 'x'), (2, 1, 'y'), (3, 1, 'c')")
                self.assertEqual(affected, 1)
                # Updated rows count 2 each, as on one server.
                affected = cur.execute(f"INSERT INTO {self.table.name} (conv_id, seq, body) VALUES "
                                       f"(1, 1, 'u1'), (3, 1, 'u3'), (4, 1, 'n4') "
                                       f"ON DUPLICATE KEY UPDATE body = VALUES(body)")
                self.assertEqual(affected, 2 + 2 + 1)
                # REPLACE of an existing row: delete + insert = 2.
                affected = cur.execute(f"REPLACE INTO {self.table.name} (conv_id, seq, body) VALUES "
                                       f"(2, 1, 'r2'), (5, 1, 'r5')")
                self.assertEqual(affected, 2 + 1)
            self.assertEqual(self.all_rows(), {
                1: ((1, 1, "u1"),), 2: ((2, 1, "r2"),), 3: ((3, 1, "u3"),), 4: ((4, 1, "n4"),), 5: ((5, 1, "r5"),),
            })
        finally:
            conn.close()

    def test_null_key_is_refused_under_best_effort(self):
        conn = self.best.connect()
        try:
            errno, message = sf.error_of(lambda: sf.rows(
                conn, f"INSERT INTO {self.table.name} (conv_id, seq) VALUES (1, 1), (NULL, 2)"))
            self.assertEqual(errno, 9108, message)
            self.assertEqual(self.all_rows(), {})
        finally:
            conn.close()

    def test_transaction_on_one_backend_is_atomic_per_statement(self):
        d = sf.direct(sf.backend_port(2))
        try:
            sf.rows(d, f"INSERT INTO {self.table.physical(2)} (conv_id, seq, body) VALUES (2, 1, 'before')")
        finally:
            d.close()
        conn = self.best.connect()
        try:
            sf.rows(conn, "BEGIN")
            sf.rows(conn, f"INSERT INTO {self.table.name} (conv_id, seq, body) VALUES (1, 1, 'a'), (3, 1, 'c')")
            # Not visible outside before COMMIT.
            self.assertEqual(self.all_rows(), {2: ((2, 1, "before"),)})
            # A part failing inside the transaction undoes the statement's other parts only.
            errno, message = sf.error_of(lambda: sf.rows(
                conn, f"INSERT INTO {self.table.name} (conv_id, seq, body) VALUES (4, 1, 'd'), (2, 1, 'dup')"))
            self.assertEqual(errno, 1062, message)
            self.assertIn(f"shard 02 ({self.table.physical(2)} on backend db0)", message)
            self.assertIn("rolled back (to a savepoint)", message)
            # A second backend is refused before anything runs.
            errno, message = sf.error_of(lambda: sf.rows(
                conn, f"INSERT INTO {self.table.name} (conv_id, seq, body) VALUES (5, 1, 'e'), (9, 1, 'f')"))
            self.assertEqual(errno, 9120, message)
            self.assertIn("backend db1", message)
            sf.rows(conn, "COMMIT")
            self.assertEqual(self.all_rows(), {1: ((1, 1, "a"),), 2: ((2, 1, "before"),), 3: ((3, 1, "c"),)})
            # ROLLBACK undoes a split write.
            sf.rows(conn, "BEGIN")
            sf.rows(conn, f"INSERT INTO {self.table.name} (conv_id, seq) VALUES (9, 1), (10, 1)")
            sf.rows(conn, "ROLLBACK")
            self.assertEqual(set(self.all_rows()), {1, 2, 3})
        finally:
            conn.close()

    def test_prepared_split_runs_like_the_text_statement(self):
        """COM_STMT_EXECUTE of an INSERT whose bound keys land on two shards: split like the
        text statement (the values are inlined), one OK with both rows counted, rows on both
        shards. PyMySQL has no server-side prepare, so the commands are sent by hand."""
        conn = self.best.connect()
        try:
            sql = f"INSERT INTO {self.table.name} (conv_id, seq) VALUES (?, 1), (?, 1)"
            conn._execute_command(COMMAND.COM_STMT_PREPARE, sql)
            ok = conn._read_packet()
            statement_id, columns, params = struct.unpack("<IHH", ok.get_all_data()[1:9])
            self.assertEqual((columns, params), (0, 2))
            for _ in range(params):  # parameter definitions, then EOF (PyMySQL keeps EOF packets)
                conn._read_packet()
            eof = conn._read_packet()
            self.assertTrue(eof.is_eof_packet())
            # flags 0, iteration 1, NULL bitmap 0, new-params-bound 1, two BIGINT UNSIGNED.
            execute = struct.pack("<IBIBB", statement_id, 0, 1, 0, 1) + bytes([0x08, 0x80, 0x08, 0x80])
            execute += struct.pack("<QQ", 1, 9)
            conn._execute_command(COMMAND.COM_STMT_EXECUTE, execute)
            result = conn._read_packet()
            self.assertTrue(result.is_ok_packet(), result.get_all_data()[:80])
            self.assertEqual(result.get_all_data()[1], 2)  # affected rows, both parts summed
            self.assertEqual(set(self.all_rows()), {1, 9})
            self.assertEqual(sf.rows(conn, "SELECT 1"), ((1,),))  # the session goes on
        finally:
            conn.close()

    def test_explain_shards_shows_the_parts(self):
        conn = self.best.connect()
        try:
            plan = sf.rows(conn, f"EXPLAIN SHARDS INSERT INTO {self.table.name} (conv_id, seq) VALUES (1, 1), (9, 1)")
            self.assertEqual(plan, (
                ("01", "db0", self.table.physical(1), f"INSERT INTO {self.table.physical(1)} (conv_id, seq) VALUES (1, 1)"),
                ("09", "db1", self.table.physical(9), f"INSERT INTO {self.table.physical(9)} (conv_id, seq) VALUES (9, 1)"),
            ))
            self.assertEqual(self.all_rows(), {})
        finally:
            conn.close()


if __name__ == "__main__":
    unittest.main()
