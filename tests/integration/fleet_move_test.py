"""A bucket move's cut-over across a fleet of three proxies (issue 19, part 3).

Run by ctest as integration.fleet_move (tests/integration/fleet.cmake), or by hand:
  cd tests/integration && SP_PROXY_BINARY=../../build/proxy/shardproxy /usr/bin/python3 -m unittest -v fleet_move_test

A real 3-member etcd cluster and three proxies (scripts/fleet), the move
test's tables (it_move_chan: the DDL of tg_channel_message, 4 shards) and its
unsharded mirror (it_move_mirror on db1).

test_1: MOVE BUCKET 17 on p2 while writers on all three proxies insert, edit
and delete rows of the moving keys and of keys that stay (each write repeated
on the mirror). A trigger on the source table (it_move_chan_s01 on db0)
records every write it receives with the server's UTC time, so:
  * 0 writes to the old place after the switch: no write of a moving key
    reached the source after the first proxy applied the new map (SHOW FLEET
    applied_at), while clients kept writing those keys after it;
  * 0 lost, 0 misplaced: after CLEANUP MOVE every row equals the mirror and
    lives where the new map says;
  * no client error, every read-back equal to the mirror.
The figures (acknowledgements collected, fleet-wide hold, write latency of the
moving keys around the switch) are printed, never asserted.

test_2: a proxy killed without leaving (still in the roster, its lease
expired) blocks the cut-over: the move fails after its attempts, routing
stays on the source, and the message names the proxy.
"""
import datetime
import os
import random
import re
import shutil
import statistics
import threading
import time
import unittest

import pymysql

import admin_proxy as ap
import fleet_test as ft
import move_test as mt
from admin_proxy import rows

WRITERS_PER_PROXY = int(os.environ.get("SP_FLEET_MOVE_WRITERS", "2"))
SECONDS = float(os.environ.get("SP_FLEET_MOVE_SECONDS", "2"))
# Between two writes of one writer: the catch-up applies one target
# transaction per source transaction, and must get ahead of the writers on
# a loaded 2-core machine for the cut-over to start.
PAUSE_S = float(os.environ.get("SP_FLEET_MOVE_PAUSE_MS", "10")) / 1000
CHAN, MOVING_BUCKET = mt.CHAN, mt.MOVING_BUCKET
SOURCE = f"{CHAN}_s01"  # bucket 17 lives on s01 (db0) before the move
AUDIT = "it_fleet_move_audit"
MOVES = {"batch_rows": 1000, "hold_timeout_ms": 10000, "cutover_attempts": 3}


def utc(text):
    """SHOW FLEET's applied_at ("2026-11-30T10:21:07.123Z") as a naive UTC datetime."""
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")


def app(proxy):
    return pymysql.connect(host=ap.HOST, port=proxy.port, user="app", password="app_pw", database="im",
                           autocommit=True, connect_timeout=5, read_timeout=30)


class Writer(threading.Thread):
    """Writes its own keys of the channel table through one proxy and the same statements to the mirror."""

    def __init__(self, proxy, index, keys, stop):
        super().__init__(daemon=True)
        self.proxy, self.keys, self.stop = proxy, keys, stop
        self.rng = random.Random(index)
        self.errors, self.mismatches = [], []
        self.writes = []  # (wall clock sent, seconds, moving)
        self.rows = {}    # key -> [pk of rows that exist]
        self.next_id = 1_000_000 * (index + 1)

    def statement(self):
        key = self.rng.choice(self.keys)
        existing = self.rows.setdefault(key, [])
        self.next_id += 1
        n = self.next_id
        op = self.rng.random()
        if not existing or op < 0.5:
            month = self.rng.choice(mt.MONTHS)
            pk = (key, month, n)
            existing.append(pk)
            return (f"INSERT INTO {{t}} (peer_id, message_id, message_month, message_time, text_body, ingested_at) "
                    f"VALUES (%s, %s, %s, %s, %s, %s)",
                    (key, n, month, month + " 10:00:00.123", f"body {n} 'q' \\ é", "2024-12-05 01:02:03.456")), pk
        pk = self.rng.choice(existing)
        if op < 0.85:
            return (f"UPDATE {{t}} SET text_body = %s, edited_at = %s WHERE peer_id = %s AND message_month = %s "
                    f"AND message_id = %s", (f"edit {n}", "2024-12-06 00:00:00.001", *pk)), pk
        existing.remove(pk)
        return (f"DELETE FROM {{t}} WHERE peer_id = %s AND message_month = %s AND message_id = %s", pk), pk

    def run(self):
        try:
            conn, mir = app(self.proxy), mt.mirror()
        except pymysql.MySQLError as e:
            self.errors.append(f"{self.proxy.name}: connect: {e}")
            return
        count = 0
        while not self.stop.is_set():
            (sql, args), pk = self.statement()
            sent, t0 = time.time(), time.monotonic()
            try:
                with conn.cursor() as cur:
                    affected = cur.execute(sql.format(t=CHAN), args)
            except pymysql.MySQLError as e:
                self.errors.append(f"{self.proxy.name} {sql[:6]} {pk}: {e}")
                continue
            self.writes.append((sent, time.monotonic() - t0, mt.bucket_of(pk[0]) == MOVING_BUCKET))
            with mir.cursor() as cur:
                mirrored = cur.execute(sql.format(t=CHAN), args)
            if affected != mirrored:
                self.mismatches.append((pk, f"affected {affected} through {self.proxy.name}, {mirrored} on the mirror"))
            count += 1
            time.sleep(PAUSE_S)
            if count % 4 == 0:
                where = "peer_id = %s AND message_month = %s AND message_id = %s"
                a = rows(conn, f"SELECT * FROM {CHAN} WHERE {where}", pk)
                b = rows(mir, f"SELECT * FROM {CHAN} WHERE {where}", pk)
                if a != b:
                    self.mismatches.append((pk, a, b))
        conn.close()
        mir.close()


class FleetMoveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(ft.RUN_ROOT, exist_ok=True)
        cls.etcd = ft.fleet.EtcdCluster(ft.RUN_ROOT, ft.ETCD_PORTS, ft.PEER_PORTS, token=f"itm-{os.getpid()}")
        cls.etcd.destroy()
        cls.proxies = []
        try:
            mt.create_tables()
            cls.create_audit()
            cls.etcd.start(fresh=True)
            binary = os.environ.get("SP_PROXY_BINARY", os.path.join(ft.REPO_ROOT, "build", "proxy", "shardproxy"))
            base = os.path.join(ft.REPO_ROOT, "conf", "shardproxy.yaml")
            for name, port in zip(ft.fleet.NAMES, ft.proxy_ports()):
                p = ft.fleet.FleetProxy(ft.RUN_ROOT, name, port, binary)
                shutil.rmtree(os.path.join(p.dir, "cache"), ignore_errors=True)
                config = ft.fleet.proxy_config(base, name, port, port + 1, p.dir, cls.etcd.endpoints(),
                                               f"/shardproxy/itm-{os.getpid()}", [ap.DB0_PORT, ap.DB1_PORT])
                for b in config["backends"]:
                    b["replication_user"], b["replication_password"] = "proxy_repl", "proxy_repl_pw"
                config["moves"] = dict(MOVES)
                config["fleet"]["fence_ack_timeout_ms"] = 1000
                p.write_config(config)
                p.write_map(mt.map_text(1))
                p.start()
                cls.proxies.append(p)
            cls.wait_fleet(3)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for p in getattr(cls, "proxies", []):
            p.stop()
        cls.etcd.destroy()
        c = ap.root(ap.DB0_PORT)
        rows(c, f"DROP TRIGGER IF EXISTS im.{AUDIT}_i")
        rows(c, f"DROP TRIGGER IF EXISTS im.{AUDIT}_u")
        rows(c, f"DROP TRIGGER IF EXISTS im.{AUDIT}_d")
        c.close()

    @classmethod
    def create_audit(cls):
        """Every write the source table receives, with the server's UTC time (microseconds)."""
        c = ap.root(ap.DB0_PORT)
        rows(c, f"DROP TABLE IF EXISTS im.{AUDIT}")
        rows(c, f"CREATE TABLE im.{AUDIT} (id BIGINT AUTO_INCREMENT PRIMARY KEY, peer_id BIGINT NOT NULL, "
                f"op CHAR(1) NOT NULL, at DATETIME(6) NOT NULL) ENGINE=InnoDB")
        for suffix, event, row in (("i", "INSERT", "NEW"), ("u", "UPDATE", "NEW"), ("d", "DELETE", "OLD")):
            rows(c, f"DROP TRIGGER IF EXISTS im.{AUDIT}_{suffix}")
            rows(c, f"CREATE TRIGGER im.{AUDIT}_{suffix} AFTER {event} ON im.{SOURCE} FOR EACH ROW "
                    f"INSERT INTO im.{AUDIT} (peer_id, op, at) VALUES ({row}.peer_id, '{suffix}', UTC_TIMESTAMP(6))")
        c.close()

    wait_fleet = ft.FleetTest.__dict__["wait_fleet"]  # the same classmethod, over this class's proxies

    def seed(self, keys):
        conn, mir = app(self.proxies[0]), mt.mirror()
        for k in keys:
            for month in mt.MONTHS:
                values = ", ".join(f"({k}, {i}, '{month}', '{month} 09:00:00', 'seed {i}', '2024-12-01 00:00:00')"
                                   for i in range(1, 16))
                sql = (f"INSERT INTO {{t}} (peer_id, message_id, message_month, message_time, text_body, ingested_at) "
                       f"VALUES {values}")
                rows(conn, sql.format(t=CHAN))
                rows(mir, sql.format(t=CHAN))
        conn.close()
        mir.close()

    def test_1_bucket_move_under_load_through_three_proxies(self):
        moving = mt.keys_where(lambda k: mt.bucket_of(k) == MOVING_BUCKET, 9 * WRITERS_PER_PROXY)
        staying = mt.keys_where(lambda k: mt.bucket_of(k) in (16, 18, 50), 6 * WRITERS_PER_PROXY)
        self.seed(moving + staying)
        stop = threading.Event()
        writers = []
        for n in range(3 * WRITERS_PER_PROXY):
            writers.append(Writer(self.proxies[n % 3], n, moving[n::3 * WRITERS_PER_PROXY] +
                                  staying[n::3 * WRITERS_PER_PROXY], stop))
        for w in writers:
            w.start()
        mover = self.proxies[1]
        admin = ft.admin(mover, autocommit=True)
        try:
            time.sleep(SECONDS)
            move_start = time.time()
            move_id = int(ap.dict_rows(admin, f"MOVE BUCKET {MOVING_BUCKET} OF {CHAN} TO s03")[0]["id"])
            done = mt.wait_moves(admin, {move_id}, {"verified"}, timeout=90)[move_id]
            move_end = time.time()
            time.sleep(SECONDS)  # writes after the switch, to the new place
        finally:
            stop.set()
            for w in writers:
                w.join(60)
        errors = [e for w in writers for e in w.errors]
        self.assertEqual(errors, [], f"clients saw errors; see {[p.log_path for p in self.proxies]}")
        self.assertEqual([m for w in writers for m in w.mismatches], [], "read-backs differ from the mirror")
        self.assertTrue(done["verify"].startswith("ok:"), done)
        self.assertIn("fleet: every proxy held the keys", done["message"], done)
        self.assertIn("every live proxy served the new map", done["message"], done)

        # Every proxy serves the map of the switch; the first to apply it (the mover) says when it switched.
        fleet_rows = self.wait_fleet(3, proxy=mover)
        new_version = int(done["map_version"].split("->")[1])
        self.assertEqual({int(r["version"]) for r in fleet_rows}, {new_version}, fleet_rows)
        switched_at = min(utc(r["applied_at"]) for r in fleet_rows)

        # 0 writes to the old place after the switch (read from the source's own trigger).
        c = ap.root(ap.DB0_PORT)
        moving_list = ",".join(str(k) for k in moving)
        late = rows(c, f"SELECT peer_id, op, at FROM im.{AUDIT} WHERE peer_id IN ({moving_list}) AND at > %s "
                       f"ORDER BY at LIMIT 5", (switched_at,))
        before = rows(c, f"SELECT COUNT(*) FROM im.{AUDIT} WHERE peer_id IN ({moving_list}) AND at <= %s",
                      (switched_at,))[0][0]
        c.close()
        switched_epoch = switched_at.replace(tzinfo=datetime.timezone.utc).timestamp()
        sent_after = sum(1 for w in writers for (sent, d, mv) in w.writes if mv and sent > switched_epoch)
        self.assertEqual(late, (), f"writes of moving keys reached the source after the switch at {switched_at}")
        self.assertGreater(before, 0, "the source's trigger saw no write of the moving keys at all")
        self.assertGreater(sent_after, 0, "no client wrote the moving keys after the switch")

        # 0 lost, 0 misplaced (after CLEANUP the source keeps no copy).
        rows(admin, f"CLEANUP MOVE {move_id}")
        mt.wait_moves(admin, {move_id}, {"cleaned_up"})
        admin.close()
        version, chan_place, _ = mt.placement(mover.map_path)
        self.assertEqual(version, new_version)
        mir = mt.mirror()
        expected = set(rows(mir, f"SELECT * FROM {CHAN}"))
        mir.close()
        found = mt.all_rows(CHAN, [(mt.PORTS[b], f"{CHAN}_{s}") for s, b in mt.CHAN_SHARDS.items()])
        lost = expected - set(found)
        extra = set(found) - expected
        duplicated = {r: w for r, w in found.items() if len(w) > 1}
        misplaced = {r: w for r, w in found.items() if w[0] != chan_place(r[0])}
        self.assertEqual((len(lost), len(extra), len(duplicated), len(misplaced)), (0, 0, 0, 0),
                         f"lost {sorted(lost)[:5]} extra {sorted(extra)[:5]} duplicated {list(duplicated.items())[:3]} "
                         f"misplaced {list(misplaced.items())[:3]}")
        self.assertGreater(len(expected), 0)

        # Figures.
        figures = re.findall(r"([0-9.]+) ms", done["message"])
        window = [d * 1000 for w in writers for (sent, d, mv) in w.writes if mv and move_start <= sent <= move_end]
        around = [d * 1000 for w in writers for (sent, d, mv) in w.writes
                  if mv and abs(sent - switched_epoch) <= 1.0]
        total = sum(len(w.writes) for w in writers)
        print(f"\nfleet move of bucket {MOVING_BUCKET} on {mover.name} with {len(writers)} writers on 3 proxies "
              f"({total} writes, {sent_after} to the moving keys after the switch): move {move_end - move_start:.1f} s, "
              f"acknowledgements of all 3 proxies {figures[0]} ms after the fence, all served the new map "
              f"{figures[1]} ms after the switch; write_pause_ms (local hold to lift) {done['write_pause_ms']}; "
              f"moving-key write latency ms within 1 s of the switch: p50 {ft.percentile(around, 50):.1f}, "
              f"p99 {ft.percentile(around, 99):.1f}, max {max(around):.1f} ({len(around)} writes); during the move: "
              f"p50 {statistics.median(window):.1f}, max {max(window):.1f}; source writes after the switch: 0",
              flush=True)

    def test_2_proxy_gone_without_leaving_blocks_the_cut_over(self):
        p3 = self.proxies[2]
        p3.proc.kill()  # no clean stop: it stays in the roster; its lease expires
        p3.proc.wait()
        p3.proc = None
        try:
            self.wait_fleet(2, timeout=20)
            admin = ft.admin(self.proxies[0], autocommit=True)
            before = ft.version_of(admin)
            move_id = int(ap.dict_rows(admin, f"MOVE BUCKET 18 OF {CHAN} TO s03")[0]["id"])
            row = mt.wait_moves(admin, {move_id}, {"failed"}, timeout=90)[move_id]
            self.assertIn("roster without a lease", row["message"], row)
            self.assertIn("p3", row["message"], row)
            self.assertIn("gave up after 3 attempts", row["message"], row)
            self.assertEqual(ft.version_of(admin), before)  # routing stays on the source
            admin.close()
            c = app(self.proxies[1])
            rows(c, f"INSERT INTO {CHAN} (peer_id, message_id, message_month, message_time, ingested_at) "
                    f"VALUES (%s, 1, '2024-11-01', '2024-11-01 00:00:00', '2024-11-01 00:00:00')",
                 (mt.keys_where(lambda k: mt.bucket_of(k) == 18, 1, start=50_000)[0],))
            c.close()
        finally:
            p3.start()
        self.wait_fleet(3)


if __name__ == "__main__":
    unittest.main()
