"""Online moves (issue 17) against the real test cluster, through a proxy of its own.

MoveUnderLoad moves one bucket of a channel table (it_move_chan, the DDL of
tg_channel_message, month partitions) from s01 on db0 to s03 on db1, and one
physical table of a mod table (it_move_msg_01, the DDL of msg) from db0 to db1,
while writer threads insert, edit and delete rows of the moving keys (and of
keys that stay) through the proxy, reading each write back, and reader
threads read the moving keys. Every write is repeated on an unsharded mirror
database (it_move_mirror on db1). Afterwards (and after CLEANUP MOVE):

  * every row equals the mirror: none lost, none duplicated, none resurrected;
  * every row lives on the shard the map in force computes (read from the
    map file the proxy rewrote);
  * no client statement got an error, and every read-back matched the mirror.

The figures (copy rate, catch-up lag, write pause from SHOW MOVES and as the
writers saw it, read latency before and during the moves) are printed and
written to <run dir>/figures.json. SP_MOVE_WRITERS / SP_MOVE_SECONDS scale
the load.

MoveCommands checks the refusals (9130-9134), CANCEL MOVE (routing stays on
the source, the target's copied rows are deleted) and a move resumed after
the proxy was killed during its copy.
"""
import json
import os
import random
import statistics
import threading
import time
import unittest
import zlib

import pymysql
import yaml

import admin_proxy as ap
from admin_proxy import DB0_PORT, DB1_PORT, rows
from lifecycle_proxy import ddl, month_partitions

CHAN, MSG, MIRROR = "it_move_chan", "it_move_msg", "it_move_mirror"
CHAN_SHARDS = {"s00": "db0", "s01": "db0", "s02": "db1", "s03": "db1"}
PORTS = {"db0": DB0_PORT, "db1": DB1_PORT}
MONTHS = ("2024-11-01", "2024-12-01")
WRITERS = int(os.environ.get("SP_MOVE_WRITERS", "4"))
SECONDS = float(os.environ.get("SP_MOVE_SECONDS", "6"))
MOVING_BUCKET = 17   # on s01 (16-31), db0
MOVING_SHARD = 1     # it_move_msg_01 on db0
# The mirror lives on db1, the targets' server: the catch-ups read db0's
# binlog, which then carries only the application's writes.
MIRROR_PORT = DB1_PORT


def map_text(version=1):
    return f"""# written by tests/integration/move_test.py
version: {version}
tables:
  {CHAN}:
    key: peer_id
    method: bucket
    key_prefix: "channel:"
    buckets: 64
    table: "{CHAN}_{{shard}}"
    shards:
      s00: {{buckets: "0-15", backend: db0}}
      s01: {{buckets: "16-31", backend: db0}}
      s02: {{buckets: "32-47", backend: db1}}
      s03: {{buckets: "48-63", backend: db1}}
    hot_keys: {{}}
    month: {{column: message_month, time_column: message_time, max_span_months: 12}}
    scatter: allow
  {MSG}:
    key: conv_id
    method: mod
    shards: 4
    table: "{MSG}_{{shard:02}}"
    backends: {{db0: "0-1", db1: "2-3"}}
    scatter: allow
"""


class MoveProxy(ap.ProxyRun):
    def __init__(self, name, moves=""):
        self.moves = moves
        super().__init__(name)
        self.write_map(map_text())

    def write_config(self, extra_backends=""):
        text = ap.config_text(extra_backends)
        text = text.replace("database: im, max_connections: 32}",
                            "database: im, max_connections: 32, replication_user: proxy_repl, "
                            "replication_password: proxy_repl_pw}")
        text += self.moves
        with open(self.config_path, "w") as f:
            f.write(text)


def bucket_of(key):
    return zlib.crc32(b"channel:%d" % key) % 64


def keys_where(pred, count, start=1):
    out, k = [], start
    while len(out) < count:
        if pred(k):
            out.append(k)
        k += 1
    return out


def create_tables():
    for shard, backend in CHAN_SHARDS.items():
        c = ap.direct(PORTS[backend])
        rows(c, f"DROP TABLE IF EXISTS {CHAN}_{shard}")
        rows(c, ddl("tg_channel_message", f"{CHAN}_{shard}") + month_partitions("2024-10", "2025-01"))
        c.close()
    for port in (DB0_PORT, DB1_PORT):
        c = ap.direct(port)
        for s in range(4):
            rows(c, f"DROP TABLE IF EXISTS {MSG}_{s:02d}")
        c.close()
    for s in range(4):
        c = ap.direct(DB0_PORT if s < 2 else DB1_PORT)
        rows(c, ddl("msg", f"{MSG}_{s:02d}"))
        c.close()
    c = ap.root(MIRROR_PORT)
    rows(c, f"CREATE DATABASE IF NOT EXISTS {MIRROR}")
    for t, section in ((CHAN, "tg_channel_message"), (MSG, "msg")):
        rows(c, f"DROP TABLE IF EXISTS {MIRROR}.{t}")
        rows(c, ddl(section, f"{MIRROR}`.`{t}"))
    c.close()


def mirror():
    c = ap.root(MIRROR_PORT)
    rows(c, f"USE {MIRROR}")
    return c


def insert_messages(key, count, month):
    """`count` messages of channel `key` in `month`, through the proxy."""
    app = ap.app()
    try:
        for i in range(1, count + 1):
            rows(app, f"INSERT INTO {CHAN} (peer_id, message_id, message_month, message_time, ingested_at) "
                      f"VALUES (%s, %s, %s, %s, %s)", (key, i, month, month + " 01:00:00", "2024-12-01"))
    finally:
        app.close()


def wait_moves(admin, ids, states, timeout=180):
    deadline = time.monotonic() + timeout
    while True:
        got = {r["id"]: r for r in ap.dict_rows(admin, "SHOW MOVES") if int(r["id"]) in ids}
        if all(got.get(str(i), {}).get("state") in states for i in ids):
            return {int(k): v for k, v in got.items()}
        bad = [r for r in got.values() if r["state"] in ("failed", "cancelled", "verify_failed")
               and r["state"] not in states]
        if bad or time.monotonic() > deadline:
            raise AssertionError(f"moves did not reach {states}: {list(got.values())}")
        time.sleep(0.2)


class Writer(threading.Thread):
    """Writes to its own keys through the proxy and the same statements to the mirror; reads each 4th write back."""

    def __init__(self, index, chan_keys, msg_keys, stop):
        super().__init__(daemon=True)
        self.index, self.chan_keys, self.msg_keys, self.stop = index, chan_keys, msg_keys, stop
        self.rng = random.Random(index)
        self.errors, self.mismatches = [], []
        self.latencies = []  # (start, seconds, moving)
        self.rows = {}       # (table, pk) -> True for rows that exist
        self.next_id = 1_000_000 * (index + 1)
        self.moving_chan = {k for k in chan_keys if bucket_of(k) == MOVING_BUCKET}
        self.moving_msg = {k for k in msg_keys if k % 4 == MOVING_SHARD}

    def statement(self):
        """(table, sql, args, pk, moving) of one random write."""
        chan = self.rng.random() < 0.5
        keys = self.chan_keys if chan else self.msg_keys
        key = self.rng.choice(keys)
        table = CHAN if chan else MSG
        moving = key in (self.moving_chan if chan else self.moving_msg)
        existing = [pk for (t, pk) in self.rows if t == table and pk[0] == key]
        op = self.rng.random()
        self.next_id += 1
        n = self.next_id
        if not existing or op < 0.5:
            if chan:
                month = self.rng.choice(MONTHS)
                pk = (key, month, n)
                return table, (f"INSERT INTO {{t}} (peer_id, message_id, message_month, message_time, text_body, "
                               f"content_hash, ingested_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                               (key, n, month, month + " 10:00:00.123", f"body {n} 'q' \\ é", None,
                                "2024-12-05 01:02:03.456")), pk, moving, "insert"
            pk = (key, n)
            return table, (f"INSERT INTO {{t}} (conv_id, seq, msg_id, sender_uid, content, created_at) "
                           f"VALUES (%s, %s, %s, %s, %s, %s)",
                           (key, n, n, 7, bytes([0, 39, 92, n % 256]) + b"x", "2024-12-01 00:00:00.5")), pk, moving, "insert"
        pk = self.rng.choice(existing)
        if op < 0.85:
            if chan:
                return table, (f"UPDATE {{t}} SET text_body = %s, edited_at = %s WHERE peer_id = %s "
                               f"AND message_month = %s AND message_id = %s",
                               (f"edit {n}", "2024-12-06 00:00:00.001", *pk)), pk, moving, "update"
            return table, (f"UPDATE {{t}} SET status = 1, content = %s WHERE conv_id = %s AND seq = %s",
                           (b"edit\x00" + str(n).encode(), *pk)), pk, moving, "update"
        if chan:
            return table, (f"DELETE FROM {{t}} WHERE peer_id = %s AND message_month = %s AND message_id = %s",
                           pk), pk, moving, "delete"
        return table, (f"DELETE FROM {{t}} WHERE conv_id = %s AND seq = %s", pk), pk, moving, "delete"

    def read_back(self, app, mir, table, pk):
        where = ("peer_id = %s AND message_month = %s AND message_id = %s" if table == CHAN
                 else "conv_id = %s AND seq = %s")
        a = rows(app, f"SELECT * FROM {table} WHERE {where}", pk)
        b = rows(mir, f"SELECT * FROM {table} WHERE {where}", pk)
        if a != b:
            self.mismatches.append((table, pk, a, b))

    def run(self):
        app = ap.app(read_timeout=30)
        mir = mirror()
        count = 0
        while not self.stop.is_set():
            table, (sql, args), pk, moving, op = self.statement()
            t0 = time.monotonic()
            try:
                with app.cursor() as cur:
                    affected = cur.execute(sql.format(t=table), args)
            except pymysql.MySQLError as e:
                self.errors.append(f"{op} {table} {pk}: {e}")
                continue
            self.latencies.append((t0, time.monotonic() - t0, moving))
            with mir.cursor() as cur:
                mirror_affected = cur.execute(sql.format(t=table), args)
            if affected != mirror_affected:
                self.mismatches.append((table, pk, f"affected {affected} through the proxy, {mirror_affected} on the mirror"))
            if op == "insert":
                self.rows[(table, pk)] = True
            elif op == "delete":
                self.rows.pop((table, pk), None)
            count += 1
            if count % 4 == 0:
                self.read_back(app, mir, table, pk)
        app.close()
        mir.close()


class Reader(threading.Thread):
    def __init__(self, keys, stop):
        super().__init__(daemon=True)
        self.keys, self.stop = keys, stop
        self.latencies, self.errors = [], []

    def run(self):
        app = ap.app(read_timeout=30)
        rng = random.Random(99)
        while not self.stop.is_set():
            k = rng.choice(self.keys)
            t0 = time.monotonic()
            try:
                rows(app, f"SELECT COUNT(*), MAX(message_id) FROM {CHAN} WHERE peer_id = %s "
                          f"AND message_month = %s", (k, MONTHS[0]))
            except pymysql.MySQLError as e:
                self.errors.append(str(e))
                continue
            self.latencies.append((t0, time.monotonic() - t0))
        app.close()


def all_rows(table, tables_by_port):
    """{row: [(port, physical)]} over every listed physical table."""
    out = {}
    for port, physical in tables_by_port:
        c = ap.direct(port)
        exists = rows(c, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'im' "
                         "AND TABLE_NAME = %s", (physical,))[0][0]
        if exists:
            for r in rows(c, f"SELECT * FROM {physical}"):
                out.setdefault(r, []).append((port, physical))
        c.close()
    return out


def placement(map_path):
    """Functions key -> (port, physical table) under the map in the file."""
    with open(map_path) as f:
        m = yaml.safe_load(f)
    chan = m["tables"][CHAN]
    bucket_shard = {}
    for name, s in chan["shards"].items():
        for part in str(s["buckets"]).split(","):
            lo, _, hi = part.partition("-")
            for b in range(int(lo), int(hi or lo) + 1):
                bucket_shard[b] = name
    hot = {int(k): v for k, v in (chan.get("hot_keys") or {}).items()}

    def chan_place(key):
        shard = hot.get(key, bucket_shard[bucket_of(key)])
        return PORTS[chan["shards"][shard]["backend"]], f"{CHAN}_{shard}"

    msg_backend = {}
    for backend, ranges in m["tables"][MSG]["backends"].items():
        for part in str(ranges).split(","):
            lo, _, hi = part.partition("-")
            for s in range(int(lo), int(hi or lo) + 1):
                msg_backend[s] = backend

    def msg_place(key):
        return PORTS[msg_backend[key % 4]], f"{MSG}_{key % 4:02d}"

    return m["version"], chan_place, msg_place


def percentile(values, p):
    if not values:
        return 0.0
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


class MoveUnderLoad(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        create_tables()
        # A throttled copy (about 2 s) so the catch-up has the writes of those
        # seconds to apply before the cut-over.
        cls.proxy = MoveProxy("move_load", "moves: {batch_rows: 100, pause_ms: 150, hold_timeout_ms: 1000}\n")
        cls.proxy.start()

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()

    def seed(self, chan_keys, msg_keys):
        """Rows for every key before the move (through the proxy and the mirror)."""
        app, mir = ap.app(), mirror()
        for k in chan_keys:
            values = ", ".join(f"({k}, {i}, '{MONTHS[i % 2]}', '{MONTHS[i % 2]} 09:00:00', 'seed {i}', NULL, "
                               f"'2024-12-01 00:00:00')" for i in range(1, 61))
            sql = (f"INSERT INTO {{t}} (peer_id, message_id, message_month, message_time, text_body, edited_at, "
                   f"ingested_at) VALUES {values}")
            # One statement per month: a multi-row INSERT must stay on one shard and one month is enough.
            rows(app, sql.format(t=CHAN))
            rows(mir, sql.format(t=CHAN))
        for k in msg_keys:
            values = ", ".join(f"({k}, {i}, {k * 1000 + i}, 3, X'00ff{i:02x}', '2024-12-01 00:00:00')"
                               for i in range(1, 61))
            sql = f"INSERT INTO {{t}} (conv_id, seq, msg_id, sender_uid, content, created_at) VALUES {values}"
            rows(app, sql.format(t=MSG))
            rows(mir, sql.format(t=MSG))
        app.close()
        mir.close()

    def test_move_bucket_and_shard_under_load(self):
        moving_chan = keys_where(lambda k: bucket_of(k) == MOVING_BUCKET, WRITERS * 4)
        staying_chan = keys_where(lambda k: bucket_of(k) in (16, 18, 50), WRITERS * 2)
        moving_msg = keys_where(lambda k: k % 4 == MOVING_SHARD, WRITERS * 4, start=100)
        staying_msg = keys_where(lambda k: k % 4 in (0, 2), WRITERS * 2, start=100)
        self.seed(moving_chan + staying_chan, moving_msg + staying_msg)

        stop = threading.Event()
        writers = [Writer(i, moving_chan[i::WRITERS] + staying_chan[i::WRITERS],
                          moving_msg[i::WRITERS] + staying_msg[i::WRITERS], stop) for i in range(WRITERS)]
        readers = [Reader(moving_chan, stop) for _ in range(2)]
        for t in writers + readers:
            t.start()
        time.sleep(SECONDS / 3)  # the baseline
        admin = ap.admin(autocommit=True)
        move_start = time.monotonic()
        bucket_move = int(ap.dict_rows(admin, f"MOVE BUCKET {MOVING_BUCKET} OF {CHAN} TO s03")[0]["id"])
        shard_move = int(ap.dict_rows(admin, f"MOVE SHARD {MOVING_SHARD} OF {MSG} TO db1")[0]["id"])
        try:
            # A second move of a table whose move runs is refused.
            with self.assertRaises(pymysql.MySQLError) as ctx:
                rows(admin, f"MOVE BUCKET 18 OF {CHAN} TO s02")
            self.assertEqual(ctx.exception.args[0], 9132, ctx.exception.args)
            done = wait_moves(admin, {bucket_move, shard_move}, {"verified"})
            move_end = time.monotonic()
            time.sleep(SECONDS / 3)  # writes after the switch, to the new place
        finally:
            stop.set()
            for t in writers + readers:
                t.join(60)

        errors = [e for w in writers for e in w.errors] + [e for r in readers for e in r.errors]
        self.assertEqual(errors, [], f"clients saw errors:\n{self.proxy.log_tail(60)}")
        mismatches = [m for w in writers for m in w.mismatches]
        self.assertEqual(mismatches, [], "read-backs through the proxy differ from the mirror")

        for move_id in (bucket_move, shard_move):
            self.assertTrue(done[move_id]["verify"].startswith("ok:"), done[move_id])
            # The writers ran through the copy: the catch-up had changes to apply.
            self.assertGreater(int(done[move_id]["rows_applied"]), 0, done[move_id])
            rows(admin, f"CLEANUP MOVE {move_id}")
        wait_moves(admin, {bucket_move, shard_move}, {"cleaned_up"})
        final = {int(r["id"]): r for r in ap.dict_rows(admin, "SHOW MOVES")}
        admin.close()

        version, chan_place, msg_place = placement(self.proxy.map_path)
        self.assertEqual(version, 3)  # two moves, one version each
        mir = mirror()
        for table, place, physical, key_index in (
                (CHAN, chan_place, [(PORTS[b], f"{CHAN}_{s}") for s, b in CHAN_SHARDS.items()], 0),
                (MSG, msg_place, [(p, f"{MSG}_{s:02d}") for p in (DB0_PORT, DB1_PORT) for s in range(4)], 0)):
            expected = set(rows(mir, f"SELECT * FROM {table}"))
            found = all_rows(table, physical)
            lost = expected - set(found)
            extra = set(found) - expected  # resurrected rows or stale versions of edited ones
            duplicated = {r: where for r, where in found.items() if len(where) > 1}
            misplaced = {r: where for r, where in found.items() if where[0] != place(r[key_index])}
            self.assertEqual((len(lost), len(extra), len(duplicated), len(misplaced)), (0, 0, 0, 0),
                             f"{table}: lost {sorted(lost)[:5]} extra {sorted(extra)[:5]} "
                             f"duplicated {list(duplicated.items())[:5]} misplaced {list(misplaced.items())[:5]}")
            self.assertGreater(len(expected), 0)
        mir.close()

        # Figures.
        moving_writes = [d for w in writers for (t0, d, moving) in w.latencies if moving]
        during = [d for w in writers for (t0, d, moving) in w.latencies if moving and move_start <= t0 <= move_end]
        reads_before = [d for r in readers for (t0, d) in r.latencies if t0 < move_start]
        reads_during = [d for r in readers for (t0, d) in r.latencies if move_start <= t0 <= move_end]
        duration = SECONDS / 3 * 2 + (move_end - move_start)
        figures = {
            "writers": WRITERS,
            "writes_to_moving_keys_per_s": round(len(moving_writes) / duration),
            "writes_total_per_s": round(sum(len(w.latencies) for w in writers) / duration),
            "moves": {str(i): {k: final[i][k] for k in ("what", "rows_copied", "copy_rows_per_s", "rows_applied",
                                                          "catchup_lag_bytes", "catchup_lag_s", "verify",
                                                          "write_pause_ms", "cutover_attempts", "rows_deleted")}
                      for i in (bucket_move, shard_move)},
            "move_seconds": round(move_end - move_start, 2),
            "moving_key_write_latency_ms_during_move": {
                "p50": round(percentile(during, 50) * 1000, 2), "p99": round(percentile(during, 99) * 1000, 2),
                "max": round(max(during, default=0) * 1000, 2)},
            "read_latency_ms": {
                "before_p50": round(percentile(reads_before, 50) * 1000, 2),
                "before_p99": round(percentile(reads_before, 99) * 1000, 2),
                "during_p50": round(percentile(reads_during, 50) * 1000, 2),
                "during_p99": round(percentile(reads_during, 99) * 1000, 2)},
        }
        with open(os.path.join(self.proxy.dir, "figures.json"), "w") as f:
            json.dump(figures, f, indent=2)
        print("\nMOVE FIGURES " + json.dumps(figures, indent=2))


class MoveCommands(unittest.TestCase):
    """Refusals, CANCEL and resume, on a proxy whose copies are slow (small throttled batches)."""

    @classmethod
    def setUpClass(cls):
        create_tables()
        cls.proxy = MoveProxy("move_commands", "moves: {batch_rows: 20, pause_ms: 150}\n")
        cls.proxy.start()
        cls.key = keys_where(lambda k: bucket_of(k) == 20, 1)[0]  # s01, db0
        insert_messages(cls.key, 200, MONTHS[0])

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()

    def error(self, admin, sql):
        with self.assertRaises(pymysql.MySQLError) as ctx:
            rows(admin, sql)
        return ctx.exception.args[0], ctx.exception.args[1]

    def route(self, key):
        app = ap.app()
        r = rows(app, f"EXPLAIN SHARDS SELECT * FROM {CHAN} WHERE peer_id = {key} AND message_month = '{MONTHS[0]}'")
        app.close()
        return r[0][0], r[0][1]

    def test_refusals(self):
        admin = ap.admin(autocommit=True)
        self.assertEqual(self.error(admin, f"MOVE BUCKET 20 OF {CHAN} TO s09")[0], 9130)
        self.assertEqual(self.error(admin, f"MOVE BUCKET 64 OF {CHAN} TO s02")[0], 9130)
        self.assertEqual(self.error(admin, f"MOVE BUCKET 20 OF nosuch TO s02")[0], 9130)
        self.assertEqual(self.error(admin, f"MOVE KEY 5 OF {MSG} TO s02")[0], 9130)
        self.assertEqual(self.error(admin, f"MOVE SHARD 1 OF {MSG} TO db7")[0], 9130)
        code, message = self.error(admin, f"MOVE BUCKET 1, 20 OF {CHAN} TO s02")
        self.assertEqual(code, 9130)
        self.assertIn("different shards", message)
        self.assertEqual(self.error(admin, f"MOVE BUCKET 20 OF {CHAN} TO s01")[0], 9131)
        self.assertEqual(self.error(admin, f"MOVE SHARD 2 OF {MSG} TO db1")[0], 9131)
        self.assertEqual(self.error(admin, "CANCEL MOVE 999")[0], 9133)
        self.assertEqual(self.error(admin, "CLEANUP MOVE 999")[0], 9133)
        self.assertEqual(self.error(admin, f"MOVE BUCKET OF {CHAN} TO s02")[0], 1064)
        admin.close()

    def test_cancel_leaves_routing_on_the_source(self):
        self.assertEqual(self.route(self.key), ("s01", "db0"))
        admin = ap.admin(autocommit=True)
        move = int(ap.dict_rows(admin, f"MOVE KEY {self.key} OF {CHAN} TO s03")[0]["id"])
        time.sleep(0.5)  # some batches copied
        rows(admin, f"CANCEL MOVE {move}")
        state = wait_moves(admin, {move}, {"cancelled"})[move]
        self.assertEqual(self.error(admin, f"CLEANUP MOVE {move}")[0], 9134)
        self.assertEqual(self.error(admin, f"CANCEL MOVE {move}")[0], 9134)
        admin.close()
        self.assertEqual(self.route(self.key), ("s01", "db0"), state)
        c = ap.direct(DB1_PORT)
        self.assertEqual(rows(c, f"SELECT COUNT(*) FROM {CHAN}_s03 WHERE peer_id = %s", (self.key,))[0][0], 0)
        c.close()

    def test_resumed_after_a_restart(self):
        key = keys_where(lambda k: bucket_of(k) == 21, 1)[0]
        insert_messages(key, 100, MONTHS[1])
        admin = ap.admin(autocommit=True)
        move = int(ap.dict_rows(admin, f"MOVE KEY {key} OF {CHAN} TO s02")[0]["id"])
        time.sleep(0.4)
        admin.close()
        self.proxy.proc.kill()  # no clean shutdown: the move is in its copy
        self.proxy.proc.wait()
        self.proxy.proc = None
        self.proxy.start()
        admin = ap.admin(autocommit=True)
        wait_moves(admin, {move}, {"verified"}, timeout=120)
        admin.close()
        self.assertEqual(self.route(key), ("s02", "db1"))
        self.assertIn("starting its copy again", self.proxy.log())
        c = ap.direct(DB1_PORT)
        self.assertEqual(rows(c, f"SELECT COUNT(*) FROM {CHAN}_s02 WHERE peer_id = %s", (key,))[0][0], 100)
        c.close()

    def test_yields_to_slow_clients(self):
        """Background work yields: a move whose source backend's clients are slow pauses, says so, and finishes."""
        key = keys_where(lambda k: bucket_of(k) == 22, 1)[0]  # s01, db0
        insert_messages(key, 200, MONTHS[0])
        admin = ap.admin(autocommit=True)
        for setting in ("max_foreground_p99_ms = 20", "min_statements = 3", "max_pause_ms = 600", "check_ms = 100"):
            rows(admin, f"SET BACKGROUND {setting}")
        stop = threading.Event()
        slow = []

        def slow_client():
            c = ap.app()
            try:
                while not stop.is_set():
                    rows(c, "SELECT SLEEP(0.05)")  # passthrough: the default backend, db0
                    slow.append(1)
            finally:
                c.close()

        clients = [threading.Thread(target=slow_client) for _ in range(3)]
        for t in clients:
            t.start()
        try:
            deadline = time.monotonic() + 10
            while not any(r["backend"] == "db0" and r["waits_now"] == "yes" for r in ap.dict_rows(admin, "SHOW BACKGROUND")):
                self.assertLess(time.monotonic(), deadline, "db0 never judged overloaded")
                time.sleep(0.1)
            started = time.monotonic()
            move = int(ap.dict_rows(admin, f"MOVE KEY {key} OF {CHAN} TO s02")[0]["id"])
            notes = set()
            while True:
                row = next(r for r in ap.dict_rows(admin, "SHOW MOVES") if int(r["id"]) == move)
                if row["message"].startswith("paused: "):
                    notes.add(row["message"])
                if row["state"] == "verified":
                    break
                self.assertNotIn(row["state"], ("failed", "cancelled", "verify_failed"), row)
                self.assertLess(time.monotonic() - started, 120, row)
                time.sleep(0.05)
            took = time.monotonic() - started
        finally:
            stop.set()
            for t in clients:
                t.join()
            rows(admin, "SET BACKGROUND max_foreground_p99_ms = 0")
        self.assertTrue(any("clients' p99 on db0" in n and "background.max_foreground_p99_ms = 20" in n for n in notes),
                        notes)
        db0 = next(r for r in ap.dict_rows(admin, "SHOW BACKGROUND") if r["backend"] == "db0")
        admin.close()
        self.assertGreaterEqual(int(db0["pauses"]), 1, db0)
        self.assertGreaterEqual(int(db0["forced"]), 1, db0)  # the overload lasted: steps ran anyway
        self.assertEqual(db0["last_paused"], f"move {move}")
        self.assertEqual(self.route(key), ("s02", "db1"))
        c = ap.direct(DB1_PORT)
        self.assertEqual(rows(c, f"SELECT COUNT(*) FROM {CHAN}_s02 WHERE peer_id = %s", (key,))[0][0], 200)
        c.close()
        print(f"\nmove under slow clients: {took:.1f} s with {db0['pauses']} pauses ({db0['paused_ms']} ms, "
              f"{db0['forced']} forced), {len(slow)} slow statements", flush=True)


if __name__ == "__main__":
    unittest.main()
