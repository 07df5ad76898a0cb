"""The change stream of logical tables (issue 33) against the real test cluster.

A proxy of its own streams two logical tables, it_chg_chan (the DDL of
tg_channel_message, bucket method, month partitions) and it_chg_msg (the DDL
of msg, mod 4), over GET /changes. Writer threads insert, edit and delete rows
through the proxy while bucket 17 of it_chg_chan moves from s01 (db0) to s03
(db1), shard 1 of it_chg_msg moves from db0 to db1, both moves are cleaned up,
and the proxy is restarted. A consumer applies the stream to a mirror (Python
dicts keyed by primary key), saving (mirror, position) checkpoints at
transaction ends; once it "crashes": drops what it applied since its last
checkpoint and resumes from the checkpoint's position. At the end:

  * the mirror equals the rows read through the proxy (0 lost, 0 extra);
  * no change was delivered twice after a resume (0 duplicated);
  * no insert of a row the mirror already has, and no update or delete of a
    row it does not have (0 phantom rows from the moves' copy and cleanup);
  * each row's versions came in commit order (tags increase per row);
  * the maintenance rows dropped by the readers are counted in /metrics.

Also: malformed requests get 400 with 9180, SHOW CHANGES on the admin port
returns the same changes as rows, and max_consumers is enforced (503, 9181).
Figures (events/s, lag p50/p99 from commit to receipt) are printed.
"""
import copy
import http.client
import json
import os
import random
import threading
import time
import unittest
import urllib.parse

import pymysql

import admin_proxy as ap
from admin_proxy import DB0_PORT, DB1_PORT, rows
from free_ports import free_ports
from lifecycle_proxy import ddl, month_partitions

CHAN, MSG = "it_chg_chan", "it_chg_msg"
CHAN_SHARDS = {"s00": "db0", "s01": "db0", "s02": "db1", "s03": "db1"}
PORTS = {"db0": DB0_PORT, "db1": DB1_PORT}
MONTHS = ("2024-11-01", "2024-12-01")
MOVING_BUCKET = 17
MOVING_SHARD = 1
WRITERS = int(os.environ.get("SP_CHANGES_WRITERS", "3"))
CHANGES_PORT = free_ports(1)[0]


def map_text():
    return f"""# written by tests/integration/changes_test.py
version: 1
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


class ChangesProxy(ap.ProxyRun):
    def __init__(self, name):
        super().__init__(name)
        self.write_map(map_text())

    def write_config(self, extra_backends=""):
        text = ap.config_text(extra_backends)
        text = text.replace("database: im, max_connections: 32}",
                            "database: im, max_connections: 32, replication_user: proxy_repl, "
                            "replication_password: proxy_repl_pw}")
        text += "moves: {batch_rows: 200, pause_ms: 50}\n"
        text += (f"changes: {{listen: 127.0.0.1:{CHANGES_PORT}, tables: [{CHAN}, {MSG}], source: primary, "
                 f"heartbeat_ms: 200, max_consumers: 3, max_events_per_second: 0, buffer_events: 500}}\n")
        with open(self.config_path, "w") as f:
            f.write(text)


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
            rows(c, ddl("msg", f"{MSG}_{s:02d}"))
        c.close()


def keys_where(pred, count, start=1):
    out, k = [], start
    while len(out) < count:
        if pred(k):
            out.append(k)
        k += 1
    return out


def pk_of(table, image):
    if table == CHAN:
        return (int(image["peer_id"]), str(image["message_month"]), int(image["message_id"]))
    return (int(image["conv_id"]), int(image["seq"]))


def text_of(table, image):
    return image["text_body"] if table == CHAN else image["content"]


def tag_of(text):
    return int(text.split()[1]) if text and text.startswith("w ") else -1


class Writer(threading.Thread):
    """Random inserts, edits and deletes of its own keys through the proxy; each write's text carries a
    tag that grows, with the time it was committed (for the lag figures). Errors (the proxy restarting)
    reconnect: the oracle is read through the proxy at the end, so an ambiguous write does not matter."""

    def __init__(self, index, chan_keys, msg_keys, stop, tags):
        super().__init__(daemon=True)
        self.index, self.chan_keys, self.msg_keys, self.stop, self.tags = index, chan_keys, msg_keys, stop, tags
        self.rng = random.Random(index)
        self.rows = {CHAN: [], MSG: []}
        self.next_tag = 1_000_000 * (index + 1)
        self.writes = self.errors = 0

    def one(self, app):
        table = CHAN if self.rng.random() < 0.5 else MSG
        self.next_tag += 1
        tag = self.next_tag
        text = f"w {tag} é"
        existing = self.rows[table]
        op = self.rng.random()
        if not existing or op < 0.5:
            if table == CHAN:
                key, month = self.rng.choice(self.chan_keys), self.rng.choice(MONTHS)
                rows(app, f"INSERT INTO {CHAN} (peer_id, message_id, message_month, message_time, text_body, "
                          f"ingested_at) VALUES (%s, %s, %s, %s, %s, %s)",
                     (key, tag, month, month + " 10:00:00.123", text, "2024-12-05 01:02:03.456"))
                existing.append((key, month, tag))
            else:
                key = self.rng.choice(self.msg_keys)
                rows(app, f"INSERT INTO {MSG} (conv_id, seq, msg_id, sender_uid, content, created_at) "
                          f"VALUES (%s, %s, %s, 7, %s, '2024-12-01 00:00:00.5')", (key, tag, tag, text))
                existing.append((key, tag))
        elif op < 0.8:
            pk = self.rng.choice(existing)
            if table == CHAN:
                rows(app, f"UPDATE {CHAN} SET text_body = %s, edited_at = NOW(3) WHERE peer_id = %s "
                          f"AND message_month = %s AND message_id = %s", (text, *pk))
            else:
                rows(app, f"UPDATE {MSG} SET content = %s, status = 1 WHERE conv_id = %s AND seq = %s", (text, *pk))
        else:
            pk = existing.pop(self.rng.randrange(len(existing)))
            if table == CHAN:
                rows(app, f"DELETE FROM {CHAN} WHERE peer_id = %s AND message_month = %s AND message_id = %s", pk)
            else:
                rows(app, f"DELETE FROM {MSG} WHERE conv_id = %s AND seq = %s", pk)
        self.tags[tag] = time.time()
        self.writes += 1

    def run(self):
        app = None
        while not self.stop.is_set():
            try:
                if app is None:
                    app = ap.app()
                self.one(app)
                time.sleep(0.002)
            except (pymysql.MySQLError, OSError):
                self.errors += 1
                if app is not None:
                    try:
                        app.close()
                    except Exception:
                        pass
                app = None
                time.sleep(0.1)
        if app is not None:
            app.close()


class Consumer(threading.Thread):
    """Applies the stream to a mirror; checkpoints (mirror, seen changes, position) at transaction ends;
    reconnects from the checkpoint when the stream breaks (proxy restart) or on crash()."""

    def __init__(self, start, tags):
        super().__init__(daemon=True)
        self.tags = tags
        self.state = {"mirror": {CHAN: {}, MSG: {}}, "seen": set(), "last_tag": {}, "position": start}
        self.saved = copy.deepcopy(self.state)
        self.saved_at = 0
        self.problems = []       # phantoms, duplicates, out-of-order versions
        self.lags = []           # seconds from commit (writer) to receipt
        self.events = 0
        self.heartbeats = 0      # since the last change
        self.reconnects = 0
        self.stop = threading.Event()
        self.crash_now = threading.Event()
        self.lock = threading.Lock()
        self.conn = self.resp = None

    def crash(self):
        self.crash_now.set()

    def apply(self, change, index):
        table, op = change["table"], change["op"]
        mirror = self.state["mirror"][table]
        before, after = change.get("before"), change.get("after")
        pk = pk_of(table, after or before)
        ident = (change["backend"], change["gtid"], index)
        if ident in self.state["seen"]:
            self.problems.append(f"duplicate {ident}")
        self.state["seen"].add(ident)
        if op == "insert" and pk in mirror:
            self.problems.append(f"phantom insert {table} {pk}")
        if op in ("update", "delete") and pk not in mirror:
            self.problems.append(f"phantom {op} {table} {pk}")
        if op == "delete":
            mirror.pop(pk, None)
        else:
            if op == "update" and pk_of(table, before) != pk:
                mirror.pop(pk_of(table, before), None)
            mirror[pk] = text_of(table, after)
            tag = tag_of(text_of(table, after))
            if tag <= self.state["last_tag"].get((table, pk), -2):
                self.problems.append(f"out of order {table} {pk}: {tag} after {self.state['last_tag'][(table, pk)]}")
            self.state["last_tag"][(table, pk)] = tag
            if tag in self.tags:
                self.lags.append(time.time() - self.tags[tag])

    def stream(self):
        query = urllib.parse.urlencode({"tables": f"{CHAN},{MSG}", "from": self.state["position"]})
        self.conn = http.client.HTTPConnection("127.0.0.1", CHANGES_PORT, timeout=10)
        self.conn.request("GET", "/changes?" + query)
        resp = self.resp = self.conn.getresponse()
        if resp.status != 200:
            raise OSError(f"GET /changes: {resp.status} {resp.read()[:300]}")
        pending = []  # the rows of the transaction being received: applied at its last row
        while not self.stop.is_set():
            if self.crash_now.is_set():
                self.crash_now.clear()
                with self.lock:
                    self.state = copy.deepcopy(self.saved)  # what was applied since the checkpoint is gone
                raise OSError("consumer crash")
            line = resp.readline()
            if not line:
                raise OSError("stream ended")
            change = json.loads(line)
            if "error" in change:
                raise OSError(change["error"])
            with self.lock:
                if change.get("heartbeat"):
                    self.heartbeats += 1
                    self.state["position"] = change["position"]
                    continue
                self.heartbeats = 0
                self.events += 1
                pending.append(change)
                if change["last"]:
                    for i, c in enumerate(pending):
                        self.apply(c, i)
                    pending = []
                    self.state["position"] = change["position"]
                    if self.events - self.saved_at >= 200:
                        self.saved = copy.deepcopy(self.state)
                        self.saved_at = self.events

    def run(self):
        while not self.stop.is_set():
            try:
                self.stream()
            except (OSError, http.client.HTTPException, ValueError):
                self.reconnects += 1
                time.sleep(0.2)  # applied transactions stay; the position is the last one's end
            finally:
                if self.resp:
                    self.resp.close()  # the socket stays open while the response is
                if self.conn:
                    self.conn.close()

    def caught_up(self):
        with self.lock:
            return self.heartbeats >= 3


def oracle():
    app = ap.app()
    out = {CHAN: {}, MSG: {}}
    for r in rows(app, f"SELECT peer_id, message_month, message_id, text_body FROM {CHAN} "
                          f"WHERE message_month >= '2024-11-01' AND message_month < '2025-01-01'"):
        out[CHAN][(int(r[0]), str(r[1]), int(r[2]))] = r[3]
    for r in rows(app, f"SELECT conv_id, seq, content FROM {MSG}"):
        out[MSG][(int(r[0]), int(r[1]))] = r[2].decode()
    app.close()
    return out


def wait_moves(admin, ids, states, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        got = {int(r["id"]): r for r in ap.dict_rows(admin, "SHOW MOVES") if int(r["id"]) in ids}
        if all(got.get(i, {}).get("state") in states for i in ids):
            return got
        if time.monotonic() > deadline or any(r["state"] in ("failed", "cancelled") for r in got.values()):
            raise AssertionError(f"moves did not reach {states}: {list(got.values())}")
        time.sleep(0.2)


def http_get(path):
    conn = http.client.HTTPConnection("127.0.0.1", CHANGES_PORT, timeout=10)
    conn.request("GET", path)
    resp = conn.getresponse()
    return conn, resp


def percentile(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else float("nan")


class ChangeStream(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        create_tables()
        cls.proxy = ChangesProxy("changes")
        cls.proxy.start()

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()

    def position_now(self):
        admin = ap.admin(autocommit=True)
        got = ap.dict_rows(admin, f"SHOW CHANGES FOR {CHAN}, {MSG} LIMIT 1 WAIT 200")
        admin.close()
        self.assertIsNone(got[-1]["table"])
        return got[-1]["position"]

    def test_1_refusals(self):
        for path, code in (("/changes?from=db0", "9180"), ("/changes?tables=nope", "9180"),
                           ("/changes?from=db0:0-1-2&from=db0:0-1-2", "9180"), ("/changes?limit=3", "9180"),
                           (f"/changes?from=db9:0-1-2&tables={CHAN}", "9180"), ("/changes?tables=a%zz", "9180")):
            conn, resp = http_get(path)
            body = resp.read().decode()
            conn.close()
            self.assertEqual(resp.status, 400, (path, body))
            self.assertIn(code, body, path)
        conn, resp = http_get("/metrics")
        self.assertEqual(resp.status, 404)
        conn.close()
        admin = ap.admin(autocommit=True)
        for bad in ("SHOW CHANGES FROM 'db0:x'", "SHOW CHANGES LIMIT 0", f"SHOW CHANGES FOR nope"):
            with self.assertRaises(pymysql.MySQLError) as ctx:
                rows(admin, bad)
            self.assertEqual(ctx.exception.args[0], 9180, (bad, ctx.exception.args))
        # max_consumers: 3 open streams, the 4th is refused.
        held = [http_get(f"/changes?tables={CHAN}") for _ in range(3)]
        for conn, resp in held:
            self.assertEqual(resp.status, 200)
        conn, resp = http_get(f"/changes?tables={CHAN}")
        self.assertEqual(resp.status, 503)
        self.assertIn("9181", resp.read().decode())
        resp.close()
        conn.close()
        with self.assertRaises(pymysql.MySQLError) as ctx:
            rows(admin, "SHOW CHANGES LIMIT 1 WAIT 100")
        self.assertEqual(ctx.exception.args[0], 9181)
        for c, r in held:
            r.close()  # http.client keeps the socket open while the response is
            c.close()
        admin.close()
        time.sleep(1.5)  # the streams notice their consumers left at the next heartbeats

    def test_2_admin_reads_the_same_changes(self):
        start = self.position_now()
        app = ap.app()
        rows(app, f"INSERT INTO {MSG} (conv_id, seq, msg_id, sender_uid, content) VALUES (2, 1, 1, 1, 'a'), (2, 2, 2, 1, 'b')")
        rows(app, f"UPDATE {MSG} SET content = 'c' WHERE conv_id = 2 AND seq = 1")
        rows(app, f"DELETE FROM {MSG} WHERE conv_id = 2")
        app.close()
        admin = ap.admin(autocommit=True)
        got = ap.dict_rows(admin, f"SHOW CHANGES FOR {MSG} FROM '{start}' LIMIT 100 WAIT 3000")
        changes = [(r["op"], r["key"], r["last"]) for r in got if r["table"]]
        self.assertEqual(changes, [("insert", "2", "0"), ("insert", "2", "1"), ("update", "2", "1"),
                                   ("delete", "2", "0"), ("delete", "2", "1")], got)
        self.assertEqual(json.loads(got[2]["change"])["after"]["content"], "c")
        # From the position after the update: only the delete's two rows.
        again = ap.dict_rows(admin, f"SHOW CHANGES FOR {MSG} FROM '{got[2]['position']}' LIMIT 100 WAIT 3000")
        self.assertEqual([r["op"] for r in again if r["table"]], ["delete", "delete"])
        admin.close()
        app = ap.app()  # leave nothing behind for the next test's mirror
        self.assertEqual(rows(app, f"SELECT COUNT(*) FROM {MSG}")[0][0], 0)
        app.close()

    def test_3_through_moves_restart_and_a_consumer_crash(self):
        start = self.position_now()
        moving_chan = keys_where(lambda k: ap.bucket_of(k) == MOVING_BUCKET, WRITERS * 3)
        staying_chan = keys_where(lambda k: ap.bucket_of(k) in (16, 50), WRITERS * 2)
        moving_msg = keys_where(lambda k: k % 4 == MOVING_SHARD, WRITERS * 3, start=100)
        staying_msg = keys_where(lambda k: k % 4 in (0, 2), WRITERS * 2, start=100)
        tags = {}
        consumer = Consumer(start, tags)
        consumer.start()
        stop = threading.Event()
        writers = [Writer(i, moving_chan[i::WRITERS] + staying_chan[i::WRITERS],
                          moving_msg[i::WRITERS] + staying_msg[i::WRITERS], stop, tags) for i in range(WRITERS)]
        t0 = time.monotonic()
        for w in writers:
            w.start()
        try:
            time.sleep(3)  # rows to copy
            admin = ap.admin(autocommit=True)
            # One after the other: two cut-overs publishing at once race for the map version.
            ids = {int(ap.dict_rows(admin, f"MOVE BUCKET {MOVING_BUCKET} OF {CHAN} TO s03")[0]["id"])}
            time.sleep(0.5)
            consumer.crash()  # during a move
            wait_moves(admin, ids, {"verified"})
            ids.add(int(ap.dict_rows(admin, f"MOVE SHARD {MOVING_SHARD} OF {MSG} TO db1")[0]["id"]))
            wait_moves(admin, ids, {"verified"})
            for i in ids:
                rows(admin, f"CLEANUP MOVE {i}")
            wait_moves(admin, ids, {"cleaned_up"})
            admin.close()
            time.sleep(1)
            self.proxy.stop()  # the consumer's stream breaks; the writers fail until it is back
            time.sleep(0.5)
            self.proxy.start()
            time.sleep(2)
            consumer.crash()  # after the restart
            time.sleep(2)
        finally:
            stop.set()
            for w in writers:
                w.join(30)
        write_seconds = time.monotonic() - t0
        deadline = time.monotonic() + 30
        while not consumer.caught_up() and time.monotonic() < deadline:
            time.sleep(0.1)
        expected = oracle()
        consumer.stop.set()
        consumer.join(15)
        with consumer.lock:
            mirror = consumer.state["mirror"]
        for table in (CHAN, MSG):
            lost = set(expected[table]) - set(mirror[table])
            extra = set(mirror[table]) - set(expected[table])
            differ = [k for k in set(expected[table]) & set(mirror[table]) if expected[table][k] != mirror[table][k]]
            self.assertEqual((len(lost), len(extra), len(differ)), (0, 0, 0),
                             f"{table}: lost {sorted(lost)[:5]} extra {sorted(extra)[:5]} differ {differ[:5]}")
            self.assertGreater(len(expected[table]), 50)
        self.assertEqual(consumer.problems, [], consumer.problems[:10])
        # Both cut-overs left their marks for the stream (docs/changes.md, "Through a move").
        self.assertNotIn("no cut-over mark", self.proxy.log())
        self.assertGreaterEqual(consumer.reconnects, 3)  # two crashes and the restart
        writes = sum(w.writes for w in writers)
        print(f"\nchanges: {writes} writes in {write_seconds:.1f} s by {WRITERS} writers "
              f"({sum(w.errors for w in writers)} failed around the restart), {consumer.events} events received, "
              f"{consumer.reconnects} reconnects; lag commit->receipt p50 {percentile(consumer.lags, 50) * 1000:.1f} ms "
              f"p99 {percentile(consumer.lags, 99) * 1000:.1f} ms max {max(consumer.lags) * 1000:.1f} ms; "
              f"rows: {len(expected[CHAN])} {CHAN}, {len(expected[MSG])} {MSG}", flush=True)
        self.throughput(start)
        # The backlog read again from the start passed the moves' copy and cleanup: dropped as maintenance.
        metrics = self.metrics()
        self.assertGreater(metrics.get("shardproxy_changes_maintenance_rows_total", 0), 0, metrics)
        self.assertGreater(metrics.get("shardproxy_changes_events_total", 0), 0, metrics)

    def metrics(self):
        out = {}
        admin = ap.admin(autocommit=True)
        for r in rows(admin, "SHOW STATS"):
            name = r[0]
            try:
                out[name] = float(r[-1])
            except (TypeError, ValueError):
                pass
        admin.close()
        return out

    def throughput(self, start):
        """events/s of one consumer reading the whole backlog of this test from its start."""
        query = urllib.parse.urlencode({"tables": f"{CHAN},{MSG}", "from": start})
        conn, resp = http_get("/changes?" + query)
        self.assertEqual(resp.status, 200)
        t0, n = time.monotonic(), 0
        while True:
            line = json.loads(resp.readline())
            if line.get("heartbeat"):
                if n > 0 or time.monotonic() - t0 > 10:
                    break  # caught up (heartbeats before the first change: the readers still connecting)
                continue
            n += 1
        seconds = time.monotonic() - t0
        resp.close()
        conn.close()
        print(f"changes: backlog of {n} events read in {seconds:.2f} s: {n / seconds:.0f} events/s", flush=True)
        self.assertGreater(n, 0)


ARC = "it_chg_arc"


class ArchiveProxy(ChangesProxy):
    def __init__(self, name):
        super().__init__(name)
        self.write_map(map_text() + f"""  {ARC}:
    key: conv_id
    method: mod
    shards: 2
    table: "{ARC}_{{shard:02}}"
    backends: {{db0: "0-1"}}
    archive: {{table: "{ARC}_archive_{{shard:02}}"}}
    scatter: allow
""")

    def write_config(self, extra_backends=""):
        super().write_config(extra_backends)
        with open(self.config_path) as f:
            text = f.read()
        with open(self.config_path, "w") as f:
            f.write(text.replace(f"tables: [{CHAN}, {MSG}]", f"tables: [{CHAN}, {MSG}, {ARC}]"))


class ArchivingIsNotAChange(unittest.TestCase):
    """ARCHIVE ... OLDER THAN moves rows from the hot tables to the archive tables of the same logical
    table: the stream reports the application's inserts and nothing of the archiving."""

    def test_archiving(self):
        c = ap.direct(DB0_PORT)
        for s in range(2):
            for t in (f"{ARC}_{s:02d}", f"{ARC}_archive_{s:02d}"):
                rows(c, f"DROP TABLE IF EXISTS {t}")
                rows(c, ddl("msg", t))
        c.close()
        proxy = ArchiveProxy("changes_archive")
        proxy.start()
        try:
            admin = ap.admin(autocommit=True)
            start = ap.dict_rows(admin, f"SHOW CHANGES FOR {ARC} LIMIT 1 WAIT 200")[-1]["position"]
            app = ap.app()
            for k in (4, 5):  # one statement per shard
                values = ", ".join(f"({k}, {i}, {i}, 1, 'old {i}', '2024-01-01')" for i in range(1, 31))
                rows(app, f"INSERT INTO {ARC} (conv_id, seq, msg_id, sender_uid, content, created_at) VALUES {values}")
            app.close()
            out = ap.dict_rows(admin, f"ARCHIVE {ARC} OLDER THAN 30 DAYS")
            self.assertTrue(out, out)
            time.sleep(0.5)
            got = ap.dict_rows(admin, f"SHOW CHANGES FOR {ARC} FROM '{start}' LIMIT 1000 WAIT 3000")
            ops = [r["op"] for r in got if r["table"]]
            self.assertEqual(ops, ["insert"] * 60, got[-3:])
            c = ap.direct(DB0_PORT)
            archived = sum(rows(c, f"SELECT COUNT(*) FROM {ARC}_archive_{s:02d}")[0][0] for s in range(2))
            c.close()
            self.assertEqual(archived, 60)  # the archiving did run: every row moved, none reported
            stats = {r[0]: r[1] for r in rows(admin, "SHOW STATS")}
            self.assertGreaterEqual(float(stats["shardproxy_changes_maintenance_rows_total"]), 120)  # 60 in, 60 out
            admin.close()
        finally:
            proxy.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
