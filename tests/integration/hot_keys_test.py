"""Overload part 3 (issue 32): hot-key write serialisation and SHOW HOT KEYS.

A proxy of its own (helpers of scatter_failure_proxy.py) in front of the shared
test cluster with overload.hot_key_concurrency: 2. Writes in flight are counted
on the backend itself (information_schema.PROCESSLIST of db0, read directly
every 10 ms), never from the proxy's own figures:
- 8 concurrent autocommit UPDATEs of one conversation (each a different row,
  so the backend itself would run all 8 at once; each sleeps 0.4 s in its
  WHERE) all succeed, rows correct, at most 2 on db0 at once; an UPDATE of
  another conversation on the same backend meanwhile is not delayed;
- the same through COM_STMT_EXECUTE with the key as a bound parameter;
- after RELOAD with overload.queue_timeout_ms 300 the excess gets 9148 naming
  the table, the key, the limit and the config keys; SHOW STATS counts it;
- a transaction keeps its key's slot until COMMIT: with two transactions
  holding both slots, an autocommit write waits (SHOW HOT KEYS: 2 in flight,
  1 waiting) and runs once one commits; the transaction's own further writes
  never wait;
- SHOW HOT KEYS lists the conversation written 20x as often first, with its share;
- overload.hot_key_max_per_second: 20: 6 clients (text and prepared) writing
  one conversation flat out for 2 s get at most one write per turn, another
  conversation's writes are not paced; with queue_timeout_ms 300, 12 writes
  at once: the ones whose turn is further than 300 ms away get 9147 at once
  and nothing ran for them.
"""
import re
import struct
import threading
import time
import unittest

import pymysql

import scatter_failure_proxy as sf
from overload_test import Monitor, run_all

ER_HOT_KEY_PACED = 9147
ER_HOT_KEY_TIMEOUT = 9148
LIMIT = 2
HOT = 3     # shard 3: db0
OTHER = 5   # shard 5: db0 too


def overload_section(timeout_ms, concurrency=LIMIT, rate=0):
    return (f"overload:\n  queue_timeout_ms: {timeout_ms}\n  hot_key_concurrency: {concurrency}\n"
            f"  hot_key_max_per_second: {rate}\n")


def set_overload(run, timeout_ms, rate=0):
    with open(run.config_path) as f:
        text = f.read()
    text = re.sub(r"overload:\n(  .*\n)+", "", text)
    text = text.replace("users:\n", overload_section(timeout_ms, rate=rate) + "users:\n", 1)
    with open(run.config_path, "w") as f:
        f.write(text)


def execute_prepared_update(conn, sql, params):
    """COM_STMT_PREPARE then COM_STMT_EXECUTE with BIGINT parameters; returns affected rows."""
    conn._execute_command(0x16, sql)
    ok = conn._read_packet().get_all_data()
    stmt_id, columns, count = struct.unpack("<IHH", ok[1:9])
    for n in (count, columns):
        for _ in range(n + 1 if n else 0):  # definitions, then EOF
            conn._read_packet()
    body = struct.pack("<IBI", stmt_id, 0, 1) + bytes((len(params) + 7) // 8) + b"\x01"
    body += b"".join(struct.pack("<BB", 0x08, 0) for _ in params)
    body += b"".join(struct.pack("<q", p) for p in params)
    conn._execute_command(0x17, body)
    packet = conn._read_packet()  # OK, or ERR (raises)
    return packet.read_length_encoded_integer() if packet.read_uint8() == 0 else None


class HotKeysTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.table = sf.ShardedTable("it_hotkeys")
        cls.table.create()
        cls.run_ = sf.ProxyRun("hot_keys", cls.table, {"multi_shard_writes": "refuse"},
                               sections=overload_section(10000))
        cls.run_.start()
        with cls.run_.connect() as c:
            for conv in (HOT, OTHER):
                for seq in range(1, 9):
                    sf.rows(c, f"INSERT INTO {cls.table.name} (conv_id, seq, body) VALUES ({conv}, {seq}, 'b')")

    @classmethod
    def tearDownClass(cls):
        cls.run_.stop()
        cls.table.drop()

    def admin(self):
        return pymysql.connect(host=sf.HOST, port=self.run_.admin_port, user="admin", password="admin_pw",
                               connect_timeout=10, read_timeout=60)

    def reload(self, timeout_ms, rate=0):
        set_overload(self.run_, timeout_ms, rate)
        with self.admin() as a:
            sf.rows(a, "RELOAD SHARD MAP")

    def hot_rows(self):
        with self.admin() as a:
            return sf.rows(a, "SHOW HOT KEYS")

    def update(self, conv, seq, marker, seconds, suffix="x"):
        def go():
            with self.run_.connect() as c:
                sf.rows(c, f"UPDATE {self.table.name} SET body = CONCAT(body, '{suffix}') WHERE conv_id = {conv} "
                           f"AND seq = {seq} AND SLEEP({seconds}) = 0 /* {marker} */")
                return time.monotonic()
        return go

    def bodies(self, conv):
        return [r[2] for r in self.table.direct_rows(conv) if r[0] == conv]

    def test_1_autocommit_writes_of_one_key_wait_in_the_proxy(self):
        self.reload(10000)
        started = time.monotonic()

        def other_key():
            time.sleep(0.1)  # the hot key's queue is full by then
            t0 = time.monotonic()
            self.update(OTHER, 1, "hk_other", 0.1)()
            return ("other", time.monotonic() - t0)
        with Monitor("hk_text") as m:
            results = run_all([self.update(HOT, seq, "hk_text", 0.4) for seq in range(1, 9)] + [other_key])
        elapsed = time.monotonic() - started
        self.assertEqual([r for r in results if isinstance(r, Exception)], [])
        self.assertGreater(m.samples, 50)
        self.assertEqual(m.peak, LIMIT, f"peak writes of key {HOT} on db0: {m.peak}")
        self.assertGreaterEqual(elapsed, 8 / LIMIT * 0.4 - 0.1)  # four rounds of two
        self.assertEqual(self.bodies(HOT), ["bx"] * 8)
        other_latency = results[-1][1]
        # Another key on the same backend passes at once, not behind the queue (~1.6 s).
        self.assertLess(other_latency, 0.8, f"other key took {other_latency:.2f} s")
        with self.admin() as a:
            stats = {r[0]: r[1] for r in sf.rows(a, "SHOW STATS")}
        self.assertGreaterEqual(int(float(stats["shardproxy_hot_key_serialised_writes_total"])), 6)
        print(f"\n  text: 8 x UPDATE of key {HOT}, limit {LIMIT}: peak {m.peak} on db0, {elapsed:.2f} s; "
              f"another key {other_latency * 1000:.0f} ms", flush=True)

    def test_2_prepared_writes_pass_the_same_serialiser(self):
        self.reload(10000)
        sql = (f"UPDATE {self.table.name} SET body = CONCAT(body, 'p') WHERE conv_id = ? AND seq = ? "
               f"AND SLEEP(0.4) = 0 /* hk_prepared */")

        def go(seq):
            def run():
                c = self.run_.connect()
                try:
                    return execute_prepared_update(c, sql, [HOT, seq])
                finally:
                    c.close()
            return run
        with Monitor("hk_prepared") as m:
            results = run_all([go(seq) for seq in range(1, 7)])
        self.assertEqual(results, [1] * 6)
        self.assertEqual(m.peak, LIMIT, f"peak prepared writes of key {HOT} on db0: {m.peak}")
        self.assertEqual(self.bodies(HOT)[:6], ["bxp"] * 6)
        print(f"\n  prepared: 6 x UPDATE of key {HOT}: peak {m.peak} on db0", flush=True)

    def test_3_a_short_queue_timeout_refuses_with_9148(self):
        self.reload(300)
        results = run_all([self.update(HOT, seq, "hk_timeout", 1, "t") for seq in range(1, 7)])
        errors = [r for r in results if isinstance(r, Exception)]
        self.assertEqual(len(errors), 6 - LIMIT, results)
        for e in errors:
            self.assertEqual(e.args[0], ER_HOT_KEY_TIMEOUT, e.args)
            for word in (f"key {HOT} of table {self.table.name}", "overload.queue_timeout_ms = 300",
                         "overload.hot_key_concurrency", "retry"):
                self.assertIn(word, e.args[1])
        # Nothing ran for the refused ones.
        self.assertEqual(sum(1 for b in self.bodies(HOT) if b.endswith("t")), LIMIT)
        with self.admin() as a:
            stats = {r[0]: r[1] for r in sf.rows(a, "SHOW STATS")}
        key = 'shardproxy_hot_key_rejections_total{reason="timeout"}'
        self.assertGreaterEqual(int(float(stats[key])), 6 - LIMIT, [k for k in stats if "hot_key" in k])

    def test_4_a_transaction_keeps_its_slot_until_commit(self):
        self.reload(10000)
        t1, t2 = self.run_.connect(autocommit=False), self.run_.connect(autocommit=False)
        try:
            sf.rows(t1, f"UPDATE {self.table.name} SET body = 'a1' WHERE conv_id = {HOT} AND seq = 1")
            sf.rows(t2, f"UPDATE {self.table.name} SET body = 'a2' WHERE conv_id = {HOT} AND seq = 2")
            # Its own next write of the key, and of another key, never wait.
            t0 = time.monotonic()
            sf.rows(t1, f"UPDATE {self.table.name} SET body = 'a1' WHERE conv_id = {HOT} AND seq = 3")
            sf.rows(t1, f"UPDATE {self.table.name} SET body = 'a1' WHERE conv_id = {OTHER} AND seq = 3")
            self.assertLess(time.monotonic() - t0, 1.0)
            done = []
            waiter = threading.Thread(target=lambda: done.append(self.update(HOT, 4, "hk_txn", 0)()))
            waiter.start()
            time.sleep(0.5)
            self.assertEqual(done, [], "an autocommit write ran while two transactions held the key's slots")
            row = [r for r in self.hot_rows() if r[1] == str(HOT)][0]
            self.assertEqual((row[7], row[8]), (str(LIMIT), "1"), row)
            t1.commit()
            waiter.join(5)
            self.assertEqual(len(done), 1, "the write did not run after COMMIT freed a slot")
            t2.rollback()
        finally:
            t1.close()
            t2.close()
        bodies = self.bodies(HOT)
        self.assertEqual((bodies[0], bodies[2]), ("a1", "a1"))
        self.assertNotEqual(bodies[1], "a2")  # rolled back
        row = [r for r in self.hot_rows() if r[1] == str(HOT)][0]
        self.assertEqual((row[7], row[8]), ("0", "0"), row)  # every slot back

    def test_5_show_hot_keys_lists_the_hot_conversation_first(self):
        self.reload(10000)
        with self.run_.connect() as c:
            for i in range(400):
                conv = HOT if i % 2 == 0 else 100 + (i // 2) % 20  # HOT 20x each of the 20 others
                sf.rows(c, f"SELECT body FROM {self.table.name} WHERE conv_id = {conv} AND seq = 1")
        rows = self.hot_rows()
        self.assertGreater(len(rows), 1)
        top = rows[0]
        self.assertEqual((top[0], top[1]), (self.table.name, str(HOT)), rows[:3])
        self.assertTrue(top[2], top)  # its shard
        self.assertEqual(top[3], "db0")
        share = float(top[6])
        self.assertGreater(share, 40.0, top)
        self.assertGreater(float(top[4]), 10 * float(rows[1][4]), rows[:3])
        print(f"\n  SHOW HOT KEYS: {top}", flush=True)

    def paced_update(self, conn, conv, seq, prepared, suffix="q"):
        body = "CONCAT(LEFT(body, 30), 'q')" if suffix == "q" else f"CONCAT(body, '{suffix}')"
        sql = f"UPDATE {self.table.name} SET body = {body} WHERE conv_id = %s AND seq = %s"
        if prepared:
            return execute_prepared_update(conn, sql.replace("%s", "?"), [conv, seq])
        with conn.cursor() as cur:
            return cur.execute(sql, (conv, seq))

    def test_6_a_hot_key_is_paced_at_its_rate(self):
        rate, seconds = 20, 2.0
        self.reload(10000, rate)
        try:
            stop = time.monotonic() + seconds
            done = []

            def writer(i):
                c = self.run_.connect()
                try:
                    while time.monotonic() < stop:
                        self.paced_update(c, HOT, i % 8 + 1, prepared=i % 2 == 1)
                        done.append(time.monotonic())
                finally:
                    c.close()

            def other_key():
                time.sleep(0.5)  # the hot key's writers wait for their turns by then
                with self.run_.connect() as c:
                    t0 = time.monotonic()
                    self.paced_update(c, OTHER, 1, prepared=False)
                    return time.monotonic() - t0
            started = time.monotonic()
            results = run_all([lambda i=i: writer(i) for i in range(6)] + [other_key])
            self.assertEqual([r for r in results if isinstance(r, Exception)], [])
            elapsed = max(done) - started
            # One write per turn: the first at once, then one every 1/rate.
            self.assertLessEqual(len(done), rate * elapsed + 2, f"{len(done)} writes in {elapsed:.2f} s")
            self.assertGreaterEqual(len(done), rate * seconds * 0.5, f"{len(done)} writes in {elapsed:.2f} s")
            # Another key is not behind the hot key's turns (6 writers: each waits about 300 ms).
            self.assertLess(results[-1], 0.25, f"another key's write took {results[-1]:.3f} s")
            with self.admin() as a:
                stats = {r[0]: r[1] for r in sf.rows(a, "SHOW STATS")}
                hot = [r for r in sf.rows(a, "SHOW HOT KEYS") if r[1] == str(HOT)][0]
            self.assertGreater(int(float(stats["shardproxy_hot_key_paced_writes_total"])), 0)
            self.assertEqual(hot[10], str(rate), hot)
            print(f"\n  paced at {rate}/s: {len(done)} writes of key {HOT} by 6 clients in {elapsed:.2f} s "
                  f"({len(done) / elapsed:.1f}/s); another key's write {results[-1] * 1000:.0f} ms", flush=True)

            self.reload(300, rate)
            time.sleep(0.2)  # the key's turns taken above have passed

            def once(i):
                c = self.run_.connect()
                try:
                    return self.paced_update(c, HOT, i % 8 + 1, i % 2 == 1, suffix="r")
                finally:
                    c.close()
            results = run_all([lambda i=i: once(i) for i in range(12)])
            refused = [r for r in results if isinstance(r, Exception)]
            ran = 12 - len(refused)
            self.assertGreater(len(refused), 0, results)
            self.assertLessEqual(ran, 300 // (1000 // rate) + 2, results)
            for e in refused:
                self.assertEqual(e.args[0], ER_HOT_KEY_PACED, e.args)
                for word in (f"key {HOT} of table {self.table.name}", f"paced at {rate} per second",
                             "overload.hot_key_max_per_second", "overload.queue_timeout_ms = 300", "retry later"):
                    self.assertIn(word, e.args[1])
            # Nothing ran for the refused ones.
            self.assertEqual(sum(b.count("r") for b in self.bodies(HOT)), ran)
            print(f"  queue_timeout_ms 300: {ran} of 12 simultaneous writes ran, {len(refused)} got 9147",
                  flush=True)
        finally:
            self.reload(10000, 0)

if __name__ == "__main__":
    unittest.main()
