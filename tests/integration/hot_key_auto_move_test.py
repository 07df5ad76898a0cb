"""The hot-key policy (issue 32): overload.hot_key_auto_move gives a hot channel a shard of its own.

A proxy of its own (move_test.MoveProxy: the replication account a move's
catch-up needs; config, map and SQLite file under admin-run/hot_key_auto_move)
in front of the shared test cluster, on scratch tables it_hkmove_chan_s00..s03
(the tg_channel_message DDL; s00, s01 on db0, s02, s03 on db1), with small
thresholds: 50% of the shard, 20 statements/s, sustained 3 s, 600 s between
two moves. One writer inserts into channel HOT (s01) at about 150 rows/s;
light writers (5 rows/s) insert into another channel of s01 and into one of
s00 (alone on its shard: 100% of it, but under the rate floor) and one of s02;
nothing is written to s03, the least busy other shard.

1. The policy off (enabled: false): 6 s of that load start no move.
2. RELOAD SHARD MAP with enabled: true: the policy starts exactly one move,
   `key HOT of it_hkmove_chan to s03`, created_by `policy:hot_key_auto_move
   (...)`, which reaches `verified` under the load; the map file pins HOT to
   s03, EXPLAIN SHARDS routes it there, SHOW STATS counts one start.
3. A channel of s02 written as hard for 7 s more: no second move (the
   cooldown), and the log says why.
4. Every row a writer was told was inserted is there exactly once, through
   the proxy and directly in the physical table the new map names; HOT's rows
   through the proxy and on s03 directly have the same count and checksum.

Prints how long after the RELOAD the move started and was verified (switched).
"""
import threading
import time
import unittest

import yaml

import admin_proxy as ap
import move_test as mt
from admin_proxy import DB0_PORT, DB1_PORT, rows
from lifecycle_proxy import ddl

CHAN = "it_hkmove_chan"
SHARDS = {"s00": "db0", "s01": "db0", "s02": "db1", "s03": "db1"}
PORTS = {"db0": DB0_PORT, "db1": DB1_PORT}
HOT_RATE, LIGHT_RATE = 150, 5
SUSTAIN, COOLDOWN = 3, 600


def map_text():
    shards = "\n".join(f"      {s}: {{buckets: \"{i * 16}-{i * 16 + 15}\", backend: {b}}}"
                       for i, (s, b) in enumerate(SHARDS.items()))
    return f"""# written by tests/integration/hot_key_auto_move_test.py
version: 1
tables:
  {CHAN}:
    key: peer_id
    method: bucket
    key_prefix: "channel:"
    buckets: 64
    table: "{CHAN}_{{shard}}"
    shards:
{shards}
    hot_keys: {{}}
    scatter: allow
"""


def overload_text(enabled):
    return (f"overload:\n  hot_key_auto_move:\n    enabled: {'true' if enabled else 'false'}\n"
            f"    min_shard_share_pct: 50\n    min_statements_per_second: 20\n"
            f"    sustain_seconds: {SUSTAIN}\n    cooldown_seconds: {COOLDOWN}\n")


def shard_of(key):
    return list(SHARDS)[mt.bucket_of(key) // 16]


def key_on(shard, skip=()):
    return mt.keys_where(lambda k: shard_of(k) == shard and k not in skip, 1)[0]


class Writer(threading.Thread):
    """Inserts rows of one channel through the proxy at about `rate` per second; remembers the acknowledged ones."""

    def __init__(self, key, rate):
        super().__init__(daemon=True)
        self.key, self.rate = key, rate
        self.stop = threading.Event()
        self.inserted, self.errors = set(), []

    def run(self):
        app = ap.app()
        n, started = 0, time.monotonic()
        try:
            while not self.stop.is_set():
                n += 1
                try:
                    rows(app, f"INSERT INTO {CHAN} (peer_id, message_id, message_month, message_time, text_body, "
                              f"ingested_at) VALUES (%s, %s, '2024-12-01', '2024-12-01 10:00:00.5', %s, "
                              f"'2024-12-05 01:02:03')", (self.key, n, f"row {n} of {self.key}"))
                    self.inserted.add(n)
                except Exception as e:  # noqa: BLE001 - every error fails the test below
                    self.errors.append(repr(e))
                    if len(self.errors) > 20:
                        return
                ahead = started + n / self.rate - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)
        finally:
            app.close()


def checksum(conn, table, key):
    return rows(conn, f"SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT_WS('|', peer_id, message_id, message_month, "
                      f"message_time, text_body, ingested_at))), 0) FROM {table} WHERE peer_id = %s", (key,))[0]


class HotKeyAutoMove(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for shard, backend in SHARDS.items():
            c = ap.direct(PORTS[backend])
            rows(c, f"DROP TABLE IF EXISTS {CHAN}_{shard}")
            rows(c, ddl("tg_channel_message", f"{CHAN}_{shard}"))
            c.close()
        cls.proxy = mt.MoveProxy("hot_key_auto_move", overload_text(False))
        cls.proxy.write_map(map_text())
        cls.proxy.start()

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        for shard, backend in SHARDS.items():
            c = ap.direct(PORTS[backend])
            rows(c, f"DROP TABLE IF EXISTS {CHAN}_{shard}")
            c.close()

    def moves(self, admin):
        return ap.dict_rows(admin, "SHOW MOVES")

    def test_the_policy_moves_the_hot_channel_once(self):
        hot = key_on("s01")
        light = {"s01": key_on("s01", {hot}), "s00": key_on("s00"), "s02": key_on("s02")}
        second_hot = key_on("s02", {light["s02"]})
        writers = [Writer(hot, HOT_RATE)] + [Writer(k, LIGHT_RATE) for k in light.values()]
        for w in writers:
            w.start()
        admin = ap.admin(autocommit=True)
        try:
            # 1. Off: no move, however hot.
            time.sleep(6)
            self.assertEqual(len(self.moves(admin)), 0)
            hot_keys = ap.dict_rows(admin, "SHOW HOT KEYS")
            self.assertEqual(int(hot_keys[0]["key_value"]), hot, hot_keys)

            # 2. On through RELOAD: one move of HOT to the least busy other shard.
            self.proxy.moves = overload_text(True)
            self.proxy.write_config()
            reloaded = time.monotonic()
            rows(admin, "RELOAD SHARD MAP")
            deadline = reloaded + 25
            while not self.moves(admin):
                self.assertLess(time.monotonic(), deadline, f"no move started:\n{self.proxy.log_tail(30)}")
                time.sleep(0.1)
            started_after = time.monotonic() - reloaded
            move = self.moves(admin)[0]
            self.assertEqual(move["what"], f"key {hot} of {CHAN} to s03", move)
            self.assertTrue(move["created_by"].startswith("policy:hot_key_auto_move ("), move)
            self.assertIn("of shard s01's keyed statements", move["created_by"])
            move_id = int(move["id"])
            done = mt.wait_moves(admin, {move_id}, {"verified"}, timeout=40)[move_id]
            verified_after = time.monotonic() - reloaded
            self.assertTrue(done["verify"].startswith("ok:"), done)

            # 3. Another channel as hot, on s02: the cooldown holds it back.
            extra = Writer(second_hot, HOT_RATE)
            writers.append(extra)
            extra.start()
            time.sleep(SUSTAIN + 4)
            self.assertEqual([int(m["id"]) for m in self.moves(admin)], [move_id])
            stats = {r["series"]: r["value"] for r in ap.dict_rows(admin, "SHOW STATS")}
        finally:
            for w in writers:
                w.stop.set()
            for w in writers:
                w.join(30)
            admin.close()
        self.assertIn("cooldown_seconds = 600", self.proxy.log())
        self.assertEqual(float(stats['shardproxy_hot_key_auto_moves_total{result="started"}']), 1, stats)
        self.assertEqual(float(stats['shardproxy_hot_key_auto_moves_total{result="refused"}']), 0, stats)
        self.assertEqual([e for w in writers for e in w.errors], [], self.proxy.log_tail(40))

        # The map pins HOT to s03; the proxy routes it there.
        with open(self.proxy.map_path) as f:
            chan = yaml.safe_load(f)["tables"][CHAN]
        self.assertEqual({int(k): v for k, v in chan["hot_keys"].items()}, {hot: "s03"})
        app = ap.app()
        self.assertEqual(rows(app, f"EXPLAIN SHARDS SELECT * FROM {CHAN} WHERE peer_id = {hot}")[0][:2],
                         ("s03", "db1"))

        # 4. Every acknowledged row, once, through the proxy and where the map says.
        for w in writers:
            shard = "s03" if w.key == hot else shard_of(w.key)
            through = [r[0] for r in rows(app, f"SELECT message_id FROM {CHAN} WHERE peer_id = %s", (w.key,))]
            direct = ap.direct(PORTS[SHARDS[shard]])
            there = [r[0] for r in rows(direct, f"SELECT message_id FROM {CHAN}_{shard} WHERE peer_id = %s",
                                        (w.key,))]
            if w.key == hot:
                self.assertEqual(checksum(app, CHAN, hot), checksum(direct, f"{CHAN}_s03", hot))
            direct.close()
            self.assertEqual(sorted(through), sorted(w.inserted), f"channel {w.key} through the proxy")
            self.assertEqual(sorted(there), sorted(w.inserted), f"channel {w.key} on {shard}")
            self.assertGreater(len(w.inserted), 0)
        app.close()
        # The source keeps the copied rows until CLEANUP MOVE (the operator's, never the policy's).
        source = ap.direct(DB0_PORT)
        kept = rows(source, f"SELECT COUNT(*) FROM {CHAN}_s01 WHERE peer_id = %s", (hot,))[0][0]
        source.close()
        self.assertGreater(kept, 0)
        print(f"\n  hot channel {hot} at ~{HOT_RATE}/s: move started {started_after:.1f} s after the RELOAD "
              f"(sustain {SUSTAIN} s), verified {verified_after:.1f} s after it; {len(writers[0].inserted)} rows, "
              f"write pause {done['write_pause_ms']} ms", flush=True)


if __name__ == "__main__":
    unittest.main()
