"""Data lifecycle through the admin port (issue 18): month partition upkeep
(SHOW PARTITIONS, ENSURE PARTITIONS, automatic upkeep), late writes into pmax.

Real partitioned tables from the cluster's DDL (lifecycle_proxy.py); the
answers are compared with an unsharded mirror table holding all rows.
"""
import datetime
import random
import time
import unittest

import pymysql

import admin_proxy as ap
# Direct connections create and read the mirror database (it_life_mirror): as root.
from admin_proxy import DB0_PORT, DB1_PORT, rows, root as direct
import lifecycle_proxy as lp
from lifecycle_proxy import CHAN


def chan_row(peer_id, message_id, when):
    month = when[:7] + "-01"
    return (peer_id, message_id, month, when, None, None, f"text {peer_id}/{message_id}", None, None, when)


INSERT = (f"INSERT INTO {CHAN} (peer_id, message_id, message_month, message_time, edited_at, reply_to_msg_id, "
          "text_body, media_type, content_hash, ingested_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)")


class PartitionUpkeepTest(unittest.TestCase):
    """ENSURE / SHOW PARTITIONS with a chosen "now" (AS OF); no automatic upkeep."""

    @classmethod
    def setUpClass(cls):
        lp.create_chan_tables("2024-10", "2024-12")
        cls.proxy = lp.LifecycleProxy("lifecycle-partitions", extra="partitions: {ahead: 2}\n")
        cls.proxy.start()
        # Peers on both shards.
        cls.peers = [p for p in range(1, 200) if lp.bucket_of(p) < 32][:3] + \
                    [p for p in range(1, 200) if lp.bucket_of(p) >= 32][:3]

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        lp.drop_chan_tables()

    def setUp(self):
        self.app = ap.app()
        self.admin = ap.admin()

    def tearDown(self):
        self.app.close()
        self.admin.close()

    def insert(self, values):
        with self.app.cursor() as cur:
            for v in values:  # one statement per row: rows of several shards would be refused (9109)
                cur.execute(INSERT, v)
        m = direct(DB0_PORT)
        with m.cursor() as cur:
            cur.executemany(INSERT.replace(f"INTO {CHAN}", f"INTO {lp.MIRROR_DB}.{CHAN}"), values)
        m.close()

    def read_all(self, peer):
        sql = (f"SELECT peer_id, message_id, message_month, message_time, text_body FROM {CHAN} "
               f"WHERE peer_id = {peer} AND message_month >= '2024-01-01' AND message_month < '2026-12-01' "
               "ORDER BY message_time, message_id")
        got = rows(self.app, sql)
        m = direct(DB0_PORT)
        want = rows(m, sql.replace(f"FROM {CHAN}", f"FROM {lp.MIRROR_DB}.{CHAN}"))
        m.close()
        return got, want

    def show(self, sql):
        with self.admin.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute(sql)
            return cur.fetchall()

    def test_lifecycle_of_months(self):
        # Rows in existing months, and late/odd rows in months without a partition (they land in pmax).
        values = []
        for i, peer in enumerate(self.peers):
            values += [chan_row(peer, 10 * i + 1, "2024-11-05 10:00:00.000"),
                       chan_row(peer, 10 * i + 2, "2024-12-31 23:59:59.999"),
                       chan_row(peer, 10 * i + 3, "2025-01-01 00:00:00.000"),
                       chan_row(peer, 10 * i + 4, "2025-02-14 12:00:00.500")]
        self.insert(values)

        # SHOW PARTITIONS AS OF mid-January 2025: pmax holds January and February, months ahead missing.
        shown = self.show("SHOW PARTITIONS OF it_life_chan AS OF '2025-01-15'")
        pmax = [r for r in shown if r["partition"] == "pmax"]
        self.assertEqual(len(pmax), 2, shown)
        self.assertEqual(sum(int(r["rows"]) for r in pmax), 2 * len(self.peers))
        self.assertTrue(all(r["status"].startswith("catch-all: ") for r in pmax if int(r["rows"])), pmax)
        missing = sorted({(r["shard"], r["month"]) for r in shown if r["status"].startswith("missing")})
        self.assertEqual(missing, [(s, m) for s in ("s00", "s01") for m in ("2025-01", "2025-02", "2025-03")])
        statuses = {(r["shard"], r["partition"]): r["status"] for r in shown}
        self.assertEqual(statuses[("s00", "p202412")], "past")
        self.assertEqual(statuses[("s01", "p202410")], "past")
        for r in shown:
            if r["partition"]:
                self.assertIn(r["backend"], ("db0", "db1"))
                self.assertGreater(int(r["data_bytes"]), 0)

        # ENSURE: January..March 2025 split out of pmax on both shards; rows move, none is lost.
        before = {p: self.read_all(p) for p in self.peers}
        for got, want in before.values():
            self.assertEqual(got, want)
        ensured = self.show("ENSURE PARTITIONS AHEAD 2 AS OF '2025-01-15'")
        self.assertEqual([(r["shard"], r["added"], r["result"]) for r in ensured],
                         [("s00", "p202501,p202502,p202503", "added"), ("s01", "p202501,p202502,p202503", "added")])
        self.assertEqual([r["pmax_rows"] for r in ensured], ["0", "0"])
        for shard, port in lp.CHAN_SHARDS:
            self.assertEqual(lp.partitions_of(port, f"{CHAN}_{shard}"),
                             ["p202410", "p202411", "p202412", "p202501", "p202502", "p202503", "pmax"])
        for p in self.peers:
            got, want = self.read_all(p)
            self.assertEqual(got, want)
            self.assertEqual(len(got), 4)
        # The rows are in their own month now (the server's own pruning says so).
        c = direct(DB0_PORT if lp.bucket_of(self.peers[0]) < 32 else DB1_PORT)
        shard = "s00" if lp.bucket_of(self.peers[0]) < 32 else "s01"
        self.assertEqual(rows(c, f"SELECT COUNT(*) FROM {CHAN}_{shard} PARTITION (p202502) WHERE peer_id = %s",
                              (self.peers[0],))[0][0], 1)
        c.close()

        # The routed SQL of a February read prunes to the new February partition (the backend's EXPLAIN PARTITIONS).
        peer = self.peers[0]
        explain = rows(self.app, f"EXPLAIN SHARDS SELECT message_id FROM {CHAN} WHERE peer_id = {peer} AND "
                                 "message_time >= '2025-02-01' AND message_time < '2025-03-01'")
        c = direct(lp.chan_shard_port(peer))
        plan = rows(c, "EXPLAIN PARTITIONS " + explain[0][3])
        c.close()
        self.assertEqual(plan[0][3], "p202502", (explain, plan))
        # Two months by the time column alone: the proxy's added month predicate prunes to exactly those two.
        explain = rows(self.app, f"EXPLAIN SHARDS SELECT message_id FROM {CHAN} WHERE peer_id = {peer} AND "
                                 "message_time >= '2024-12-15' AND message_time < '2025-02-01'")
        c = direct(lp.chan_shard_port(peer))
        plan = rows(c, "EXPLAIN PARTITIONS " + explain[0][3])
        c.close()
        self.assertEqual(plan[0][3], "p202412,p202501", (explain, plan))

        # Idempotent.
        again = self.show("ENSURE PARTITIONS AHEAD 2 OF it_life_chan AS OF '2025-01-15'")
        self.assertEqual([r["result"] for r in again], ["unchanged", "unchanged"])
        self.assertEqual([r["added"] for r in again], ["-", "-"])
        shown = self.show("SHOW PARTITIONS AS OF '2025-01-15'")
        self.assertFalse([r for r in shown if r["status"].startswith("missing")], shown)

        # Across a month boundary: the last day of March needs April and May; the first of April needs June.
        r = self.show("ENSURE PARTITIONS AHEAD 2 AS OF '2025-03-31'")
        self.assertEqual([x["added"] for x in r], ["p202504,p202505"] * 2)
        r = self.show("ENSURE PARTITIONS AHEAD 2 AS OF '2025-04-01 00:00:00'")
        self.assertEqual([x["added"] for x in r], ["p202506"] * 2)
        shown = self.show("SHOW PARTITIONS AS OF '2025-04-01'")
        self.assertEqual({r["status"] for r in shown if r["partition"] == "p202504"}, {"current"})
        self.assertEqual({r["status"] for r in shown if r["partition"] == "p202506"}, {"future"})

        # A late write into a month without a partition lands in pmax and is reported.
        late = chan_row(self.peers[0], 999, "2026-08-01 08:00:00.000")
        self.insert([late])
        shown = self.show("SHOW PARTITIONS AS OF '2025-04-01'")
        pmax_rows = {r["shard"]: int(r["rows"]) for r in shown if r["partition"] == "pmax"}
        self.assertEqual(sum(pmax_rows.values()), 1, shown)
        got, want = self.read_all(self.peers[0])
        self.assertEqual(got, want)

        # The counters saw the runs (SHOW STATS lists the metrics series).
        stats = {r["series"]: float(r["value"]) for r in self.show("SHOW STATS")}
        self.assertGreaterEqual(stats["shardproxy_partitions_created_total"], 12)
        self.assertGreaterEqual(stats['shardproxy_partition_upkeep_runs_total{result="ok"}'], 4)
        self.assertEqual(stats["shardproxy_partition_missing_months"], 0)
        self.assertIn("partition upkeep (admin:admin): it_life_chan shard s00", self.proxy.log())

    def test_errors(self):
        with self.assertRaises(pymysql.MySQLError) as e:
            self.show("SHOW PARTITIONS OF it_life_msg")
        self.assertEqual(e.exception.args[0], 1105)
        self.assertIn("not a month-partitioned table", e.exception.args[1])
        self.assertIn("it_life_chan", e.exception.args[1])
        for bad in ("ENSURE PARTITIONS AHEAD", "ENSURE PARTITIONS AHEAD 500", "ENSURE PARTITIONS 3",
                    "SHOW PARTITIONS AS OF 'yesterday'", "SHOW PARTITIONS OF"):
            with self.assertRaises(pymysql.MySQLError) as e:
                self.show(bad)
            self.assertEqual(e.exception.args[0], 1064, bad)
            self.assertIn("expected", e.exception.args[1])
        help_rows = [r["command"] for r in self.show("HELP")]
        self.assertTrue(any(c.startswith("ENSURE PARTITIONS AHEAD") for c in help_rows), help_rows)


class AutomaticUpkeepTest(unittest.TestCase):
    """partitions.check_every: the proxy creates the months ahead of the real clock by itself."""

    def setUp(self):
        lp.create_chan_tables("2024-10", "2024-12")
        self.proxy = lp.LifecycleProxy("lifecycle-upkeep", extra="partitions: {ahead: 1, check_every: 1s}\n")

    def tearDown(self):
        self.proxy.stop()
        lp.drop_chan_tables()

    def test_upkeep_creates_next_months(self):
        self.proxy.start()
        now = datetime.datetime.now(datetime.timezone.utc)
        idx = now.year * 12 + now.month - 1 + 1
        want_last = f"p{idx // 12:04d}{idx % 12 + 1:02d}"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            names = [lp.partitions_of(port, f"{CHAN}_{shard}") for shard, port in lp.CHAN_SHARDS]
            if all(n[-2:] == [want_last, "pmax"] for n in names):
                break
            time.sleep(0.2)
        self.assertEqual(names[0][-2:], [want_last, "pmax"], names)
        self.assertEqual(names[1][-2:], [want_last, "pmax"], names)
        while time.monotonic() < deadline and "partition upkeep (upkeep): it_life_chan shard s01" not in self.proxy.log():
            time.sleep(0.2)
        self.assertIn("partition upkeep (upkeep): it_life_chan shard s01", self.proxy.log())
        a = ap.admin()
        stats = {r[0]: float(r[1]) for r in rows(a, "SHOW STATS")}
        a.close()
        self.assertGreater(stats["shardproxy_partitions_created_total"], 0)
        self.assertGreater(stats["shardproxy_partition_upkeep_last_run_timestamp_seconds"], 0)


class PartitionArchiveTest(unittest.TestCase):
    """ARCHIVE <month table> BEFORE: export, verify, drop; refused while a month has rows newer than its export."""

    @classmethod
    def setUpClass(cls):
        lp.create_chan_tables("2024-10", "2024-12")
        cls.export_dir = None
        cls.proxy = lp.LifecycleProxy("lifecycle-months")
        cls.export_dir = cls.proxy.dir + "/exports"
        cls.proxy.extra = f"archive: {{export_dir: {cls.export_dir}}}\n"
        cls.proxy.write_config()
        cls.proxy.start()
        s00 = [p for p in range(1, 300) if lp.bucket_of(p) < 32][:4]
        s01 = [p for p in range(1, 300) if lp.bucket_of(p) >= 32][:4]
        cls.s00, cls.s01 = s00, s01
        values = []
        for peer in s00 + s01:
            for i, when in enumerate(["2024-10-03 01:02:03.004", "2024-10-31 23:59:59.999", "2024-11-15 12:00:00.000",
                                      "2024-12-01 00:00:00.000"]):
                v = list(chan_row(peer, 100 + i, when))
                if i == 1:
                    v[6] = "tab\there\nnew line \\ back\\slash 'quote' 中文"  # escaping in the export
                    v[4] = when  # edited_at set
                if i == 2:
                    v[6] = None  # NULL text
                values.append(tuple(v))
        try:
            cls.insert_both(values)
        except Exception:
            cls.proxy.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        lp.drop_chan_tables()

    @staticmethod
    def insert_both(values):
        app = ap.app()
        with app.cursor() as cur:
            for v in values:
                cur.execute(INSERT, v)
        app.close()
        m = direct(DB0_PORT)
        with m.cursor() as cur:
            cur.executemany(INSERT.replace(f"INTO {CHAN}", f"INTO {lp.MIRROR_DB}.{CHAN}"), values)
        m.close()

    def test_export_verify_drop(self):
        import os
        admin = ap.admin(read_timeout=120)
        # Not the first day of a month: refused.
        with self.assertRaises(pymysql.MySQLError) as e:
            rows(admin, "ARCHIVE it_life_chan BEFORE '2024-12-15'")
        self.assertIn("first day of a month", e.exception.args[1])

        # EXPORT ONLY: files and manifests for October and November on both shards, nothing dropped.
        with admin.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("ARCHIVE it_life_chan BEFORE '2024-12-01' EXPORT ONLY")
            exported = cur.fetchall()
        self.assertEqual(sorted((r["shard"], r["partition"], r["state"]) for r in exported),
                         [(s, p, "exported") for s in ("s00", "s01") for p in ("p202410", "p202411")], exported)
        for r in exported:
            want = 2 * 4 if r["partition"] == "p202410" else 4
            self.assertEqual(int(r["rows"]), want, r)
            self.assertTrue(os.path.exists(r["file"]), r)
            with open(r["file"][:-4] + ".manifest") as f:
                manifest = f.read()
            self.assertIn(f"rows={want}\n", manifest)
            self.assertIn(f"sha256={r['sha256']}", manifest)
        for shard, port in lp.CHAN_SHARDS:
            self.assertEqual(lp.partitions_of(port, f"{CHAN}_{shard}"), ["p202410", "p202411", "p202412", "pmax"])

        # The export loads back into MariaDB (LOAD DATA's format) and equals the mirror's rows of that shard and month.
        r = next(x for x in exported if x["shard"] == "s00" and x["partition"] == "p202410")
        m = direct(DB0_PORT, local_infile=True)
        rows(m, f"DROP TABLE IF EXISTS {lp.MIRROR_DB}.it_life_loaded")
        rows(m, f"CREATE TABLE {lp.MIRROR_DB}.it_life_loaded LIKE {lp.MIRROR_DB}.{CHAN}")
        rows(m, f"LOAD DATA LOCAL INFILE '{r['file']}' INTO TABLE {lp.MIRROR_DB}.it_life_loaded CHARACTER SET utf8mb4")
        cols = "peer_id, message_id, message_month, message_time, edited_at, text_body, ingested_at"
        peers = ",".join(map(str, self.s00))
        loaded = rows(m, f"SELECT {cols} FROM {lp.MIRROR_DB}.it_life_loaded ORDER BY peer_id, message_id")
        want = rows(m, f"SELECT {cols} FROM {lp.MIRROR_DB}.{CHAN} WHERE peer_id IN ({peers}) AND "
                       "message_month = '2024-10-01' ORDER BY peer_id, message_id")
        self.assertEqual(loaded, want)
        self.assertTrue(any(row[5] and "\t" in row[5] for row in loaded))
        rows(m, f"DROP TABLE {lp.MIRROR_DB}.it_life_loaded")
        m.close()

        # A late message into November on s00: that month now has a row newer than its export and is refused;
        # the other expired months are dropped.
        late = chan_row(self.s00[0], 999, "2024-11-20 08:00:00.000")
        app = ap.app()
        with app.cursor() as cur:
            cur.execute(INSERT, late)
        app.close()
        with admin.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("ARCHIVE it_life_chan BEFORE '2024-12-01'")
            dropped = cur.fetchall()
        states = {(r["shard"], r["partition"]): r["state"] for r in dropped}
        self.assertEqual(states, {("s00", "p202410"): "dropped", ("s00", "p202411"): "refused",
                                  ("s01", "p202410"): "dropped", ("s01", "p202411"): "dropped"}, dropped)
        refusal = next(r for r in dropped if r["state"] == "refused")
        self.assertIn("rows newer than", refusal["message"])
        self.assertEqual(lp.partitions_of(DB0_PORT, f"{CHAN}_s00"), ["p202411", "p202412", "pmax"])
        self.assertEqual(lp.partitions_of(DB1_PORT, f"{CHAN}_s01"), ["p202412", "pmax"])

        # Remove the stale export: the month is exported again (with the late row) and dropped.
        os.remove(refusal["file"])
        os.remove(refusal["file"][:-4] + ".manifest")
        with admin.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("ARCHIVE it_life_chan BEFORE '2024-12-01'")
            again = cur.fetchall()
        self.assertEqual([(r["shard"], r["partition"], r["state"], r["rows"]) for r in again],
                         [("s00", "p202411", "dropped", "5")])
        self.assertEqual(lp.partitions_of(DB0_PORT, f"{CHAN}_s00"), ["p202412", "pmax"])
        stats = {x[0]: float(x[1]) for x in rows(admin, "SHOW STATS")}
        self.assertEqual(stats["shardproxy_archive_dropped_partitions_total"], 4)

        # A late write into a dropped month is refused (it would land in p202412, the first partition left);
        # also after a restart (the retention is in the SQLite file). December still takes writes.
        for restart in (False, True):
            if restart:
                self.proxy.stop()
                self.proxy.start()
                admin.close()
                admin = ap.admin(read_timeout=120)
            app = ap.app()
            with self.assertRaises(pymysql.MySQLError) as e:
                with app.cursor() as cur:
                    cur.execute(INSERT, chan_row(self.s01[0], 5000, "2024-11-30 10:00:00.000"))
            self.assertEqual(e.exception.args[0], 9122)
            self.assertIn("months before 2024-12-01 were archived", e.exception.args[1])
            app.close()
        ok_row = chan_row(self.s01[0], 5001, "2024-12-02 10:00:00.000")
        self.insert_both([ok_row])

        # December and later still read exactly as the mirror.
        app = ap.app()
        for peer in self.s00 + self.s01:
            sql = (f"SELECT peer_id, message_id, message_time, text_body FROM {CHAN} WHERE peer_id = {peer} "
                   "AND message_month >= '2024-12-01' AND message_month < '2025-02-01' ORDER BY message_id")
            m = direct(DB0_PORT)
            self.assertEqual(rows(app, sql), rows(m, sql.replace(f"FROM {CHAN}", f"FROM {lp.MIRROR_DB}.{CHAN}")))
            m.close()
        app.close()
        admin.close()

    def test_zz_backfill_table_takes_dropped_months(self):
        """With `backfill:` in the map, writes into dropped months go to the backfill table and reads of those
        months read it (after test_export_verify_drop dropped October and November)."""
        # Runs after test_export_verify_drop (name order), which dropped October and November.
        self.assertEqual(lp.partitions_of(DB1_PORT, f"{CHAN}_s01")[0], "p202412")
        lp.create_backfill_tables()
        self.proxy.stop()
        self.proxy.write_map(lp.map_text(version=2, chan_extra=lp.BACKFILL_MAP_EXTRA))
        self.proxy.start()
        app, m = ap.app(), direct(DB0_PORT)
        try:
            peer = self.s01[0]
            late = chan_row(peer, 7000, "2024-11-30 10:00:00.000")
            with app.cursor() as cur:
                self.assertEqual(cur.execute(INSERT, late), 1)
            with m.cursor() as cur:
                cur.execute(INSERT.replace(f"INTO {CHAN}", f"INTO {lp.MIRROR_DB}.{CHAN}"), late)
            c = direct(DB1_PORT)
            self.assertEqual(rows(c, f"SELECT message_id FROM {CHAN}_backfill_s01"), ((7000,),))
            self.assertEqual(rows(c, f"SELECT COUNT(*) FROM {CHAN}_s01 WHERE message_id = 7000")[0][0], 0)
            c.close()
            # Reads of the dropped months, and across into kept ones, equal the mirror (which still has
            # everything: the proxy's answer is the backfill row plus December).
            for lo, hi in (("2024-11-01", "2024-12-01"), ("2024-10-01", "2025-01-01")):
                sql = (f"SELECT peer_id, message_id, message_time, text_body FROM {CHAN} WHERE peer_id = {peer} AND "
                       f"message_month >= '{lo}' AND message_month < '{hi}' AND (message_id >= 5000 OR "
                       "message_month >= '2024-12-01') ORDER BY message_id LIMIT 10")
                got = rows(app, sql)
                self.assertEqual(got, rows(m, sql.replace(f"FROM {CHAN}", f"FROM {lp.MIRROR_DB}.{CHAN}")))
                self.assertIn(7000, [r[1] for r in got])
            # An UPDATE of a dropped month reaches the backfill row; a write spanning dropped and kept months is
            # refused (9122), as is the same write without a backfill table.
            with app.cursor() as cur:
                self.assertEqual(cur.execute(f"UPDATE {CHAN} SET text_body = 'edited' WHERE peer_id = %s AND "
                                             "message_month >= '2024-11-01' AND message_month < '2024-12-01'",
                                             (peer,)), 1)
            with self.assertRaises(pymysql.MySQLError) as e:
                with app.cursor() as cur:
                    cur.execute(f"UPDATE {CHAN} SET text_body = 'x' WHERE peer_id = %s AND "
                                "message_month >= '2024-11-01' AND message_month < '2025-01-01'", (peer,))
            self.assertEqual(e.exception.args[0], 9122)
            self.assertIn("split the statement at 2024-12-01", e.exception.args[1])
            c = direct(DB1_PORT)
            self.assertEqual(rows(c, f"SELECT text_body FROM {CHAN}_backfill_s01"), (("edited",),))
            c.close()
        finally:
            app.close()
            m.close()


MSG_INSERT = ("INSERT INTO {} (conv_id, seq, msg_id, sender_uid, msg_type, content, status, created_at) "
              "VALUES (%s, %s, %s, %s, 1, %s, 0, %s)")
CONVS = list(range(1001, 1013))  # 12 conversations, 3 per shard
PER_CONV = 120


def msg_values(conv, seq, when):
    return (conv, seq, conv * 100000 + seq, 7, f"m{conv}/{seq}".encode(), when)


def old_time(seq):
    """Message seq of the seed data: 2026-01-01 plus 12 hours per seq."""
    t = datetime.datetime(2026, 1, 1) + datetime.timedelta(hours=12 * seq)
    return t.strftime("%Y-%m-%d %H:%M:%S.000")


class MsgArchiveTest(unittest.TestCase):
    """ARCHIVE msg OLDER THAN n DAYS under concurrent appends; hot-then-cold reads exact against a mirror."""

    @classmethod
    def setUpClass(cls):
        lp.create_msg_tables()
        cls.proxy = lp.LifecycleProxy("lifecycle-archive", extra="archive: {batch_rows: 7, pause_ms: 0}\n",
                                      msg_extra=lp.ARCHIVE_MAP_EXTRA)
        cls.proxy.start()
        values = [msg_values(c, s, old_time(s)) for c in CONVS for s in range(1, PER_CONV + 1)]
        try:
            app = ap.app()
            with app.cursor() as cur:
                for c in CONVS:  # one conversation per statement: one shard each
                    cur.executemany(MSG_INSERT.format(lp.MSG), [v for v in values if v[0] == c])
            app.close()
        except Exception:
            cls.proxy.stop()
            raise
        m = direct(DB0_PORT)
        with m.cursor() as cur:
            cur.executemany(MSG_INSERT.format(f"{lp.MIRROR_DB}.{lp.MSG}"), values)
        m.close()

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        lp.drop_msg_tables()

    def compare(self, app, mirror, sql, args=None):
        got = rows(app, sql, args)
        want = rows(mirror, sql.replace(f"FROM {lp.MSG}", f"FROM {lp.MIRROR_DB}.{lp.MSG}"), args)
        self.assertEqual(got, want, sql)
        return got

    def test_archive_under_appends_then_hot_and_cold_reads(self):
        import threading
        stop = threading.Event()
        appended = []
        errors = []

        def appender():
            app = ap.app()
            m = direct(DB0_PORT)
            seq = PER_CONV
            try:
                while not stop.is_set():
                    seq += 1
                    for c in CONVS:
                        v = msg_values(c, seq, "2026-07-15 12:00:00.000")
                        with app.cursor() as cur:
                            cur.execute(MSG_INSERT.format(lp.MSG), v)
                        with m.cursor() as cur:
                            cur.execute(MSG_INSERT.format(f"{lp.MIRROR_DB}.{lp.MSG}"), v)
                        appended.append(v)
            except Exception as e:  # reported below: the test must not pass with a dead appender
                errors.append(e)
            finally:
                app.close()
                m.close()

        t = threading.Thread(target=appender)
        t.start()
        try:
            time.sleep(0.3)
            admin = ap.admin(read_timeout=300)
            with admin.cursor(pymysql.cursors.DictCursor) as cur:
                # 180 days before 2026-07-15 is 2026-01-16: seq 1..29 of every conversation (created before it).
                cur.execute("ARCHIVE it_life_msg OLDER THAN 180 DAYS AS OF '2026-07-15'")
                result = cur.fetchall()
        finally:
            stop.set()
            t.join()
        self.assertFalse(errors, errors)
        self.assertGreater(len(appended), 0)
        self.assertEqual([r["state"] for r in result], ["done"] * 4, result)
        self.assertEqual({r["cutoff"] for r in result}, {"2026-01-16 00:00:00"})
        self.assertEqual(sum(int(r["rows"]) for r in result), 29 * len(CONVS))
        self.assertTrue(all(int(r["batches"]) >= 29 * 3 // 7 for r in result), result)

        # On the backends: every old row moved once, nothing else moved, nothing in both tables.
        for shard, port in lp.MSG_SHARDS:
            c = direct(port)
            hot, arch = f"{lp.MSG}_{shard}", f"{lp.MSG}_archive_{shard}"
            self.assertEqual(rows(c, f"SELECT COUNT(*) FROM {hot} WHERE created_at < '2026-01-16'")[0][0], 0)
            self.assertEqual(rows(c, f"SELECT COUNT(*) FROM {arch} WHERE created_at >= '2026-01-16'")[0][0], 0)
            self.assertEqual(rows(c, f"SELECT COUNT(*) FROM {arch}")[0][0], 29 * 3)
            self.assertEqual(rows(c, f"SELECT COUNT(*) FROM {hot} h JOIN {arch} a USING (conv_id, seq)")[0][0], 0)
            c.close()

        app, mirror = ap.app(), direct(DB0_PORT)
        try:
            total = rows(mirror, f"SELECT COUNT(*) FROM {lp.MIRROR_DB}.{lp.MSG}")[0][0]
            self.assertEqual(total, len(CONVS) * PER_CONV + len(appended))
            self.assertEqual(self.compare(app, mirror, f"SELECT COUNT(*) FROM {lp.MSG}")[0][0], total)
            for conv in CONVS:
                q = f"SELECT conv_id, seq, msg_id, content, created_at FROM {lp.MSG} WHERE conv_id = %s"
                self.compare(app, mirror, q + " ORDER BY seq", (conv,))
                # Ranges across the hot/cold boundary (seq 29 | 30), within cold, within hot; both directions.
                self.compare(app, mirror, q + " AND seq > 20 ORDER BY seq LIMIT 15", (conv,))
                self.compare(app, mirror, q + " AND seq < 40 ORDER BY seq DESC LIMIT 25", (conv,))
                self.compare(app, mirror, q + " AND seq BETWEEN 3 AND 9 ORDER BY seq", (conv,))
                self.compare(app, mirror, q + " AND seq > 100 ORDER BY seq LIMIT 5", (conv,))
                got = self.compare(app, mirror, q + " AND seq = 5", (conv,))  # a point read of an archived message
                self.assertEqual(len(got), 1)
                self.compare(app, mirror, f"SELECT COUNT(*), MIN(seq), MAX(seq) FROM {lp.MSG} WHERE conv_id = %s", (conv,))
            self.compare(app, mirror, f"SELECT conv_id, COUNT(*) FROM {lp.MSG} WHERE conv_id IN (1001, 1002, 1007) "
                                      "GROUP BY conv_id ORDER BY conv_id")
            explain = rows(app, f"EXPLAIN SHARDS SELECT * FROM {lp.MSG} WHERE conv_id = 1001 AND seq > 3")
            self.assertIn("UNION ALL SELECT * FROM `it_life_msg_archive_01`", explain[0][3])
        finally:
            app.close()
            mirror.close()

        # The server reads each branch by primary-key range (the WHERE is pushed into the union).
        c = direct(lp.msg_shard_port(1001))
        plan = rows(c, "EXPLAIN SELECT seq FROM (SELECT * FROM it_life_msg_01 UNION ALL SELECT * FROM "
                       "it_life_msg_archive_01) AS t WHERE conv_id = 1001 AND seq > 20 ORDER BY seq LIMIT 15")
        c.close()
        branches = [r for r in plan if r[2] in ("it_life_msg_01", "it_life_msg_archive_01")]
        self.assertEqual(len(branches), 2, plan)
        for r in branches:
            self.assertEqual((r[3], r[5]), ("range", "PRIMARY"), plan)

        # SHOW ARCHIVES keeps the run; the same command again finds nothing left to move.
        admin = ap.admin(read_timeout=300)
        runs = rows(admin, "SHOW ARCHIVES")
        self.assertGreaterEqual(len(runs), 4)
        again = rows(admin, "ARCHIVE it_life_msg OLDER THAN 180 DAYS AS OF '2026-07-15'")
        self.assertEqual([(r[6], r[11]) for r in again], [("0", "done")] * 4)
        stats = {r[0]: float(r[1]) for r in rows(admin, "SHOW STATS")}
        self.assertEqual(stats["shardproxy_archived_rows_total"], 29 * len(CONVS))
        with self.assertRaises(pymysql.MySQLError) as e:
            rows(admin, "ARCHIVE it_life_chan OLDER THAN 10 DAYS")
        self.assertIn("no `archive:", e.exception.args[1])
        admin.close()

    def test_reads_stay_exact_while_archiving(self):
        """Reads during a run see every message exactly once (one snapshot per statement, one transaction per batch):
        whole ranges, and ranges starting anywhere (below, at, above the moving hot/cold boundary) with the
        ORDER BY / LIMIT pushed into both branches and the cold branch guarded by the hot table's lowest seq."""
        import threading
        stop = threading.Event()
        reads, wrong = [0], []

        def reader(seed):
            app = ap.app()
            rng = random.Random(seed)
            try:
                while not stop.is_set():
                    conv = rng.choice(CONVS)
                    start = rng.randint(1, PER_CONV)
                    kind = reads[0] % 3
                    if kind == 0:
                        sql, want = (f"SELECT seq FROM {lp.MSG} WHERE conv_id = %s AND seq <= {PER_CONV} ORDER BY seq",
                                     list(range(1, PER_CONV + 1)))
                    elif kind == 1:
                        sql, want = (f"SELECT seq FROM {lp.MSG} WHERE conv_id = %s AND seq >= {start} AND "
                                     f"seq <= {PER_CONV} ORDER BY seq LIMIT 20",
                                     list(range(start, min(start + 20, PER_CONV + 1))))
                    else:
                        sql, want = (f"SELECT seq FROM {lp.MSG} WHERE conv_id = %s AND seq <= {start} "
                                     "ORDER BY seq DESC LIMIT 20", list(range(start, max(start - 20, 0), -1)))
                    got = [r[0] for r in rows(app, sql, (conv,))]
                    reads[0] += 1
                    if got != want:
                        wrong.append((conv, sql, got))
            finally:
                app.close()

        threads = [threading.Thread(target=reader, args=(seed,)) for seed in (5, 6)]
        for t in threads:
            t.start()
        try:
            admin = ap.admin(read_timeout=300)
            # 150 days before 2026-07-15 is 2026-02-15: messages up to seq 89 are older.
            result = rows(admin, "ARCHIVE it_life_msg OLDER THAN 150 DAYS AS OF '2026-07-15'")
            admin.close()
        finally:
            stop.set()
            for t in threads:
                t.join()
        self.assertEqual([r[11] for r in result], ["done"] * 4, result)
        self.assertGreater(sum(int(r[6]) for r in result), 0)
        self.assertGreater(reads[0], 10)
        self.assertEqual(wrong, [])

    def test_hot_range_reads_skip_the_archive(self):
        """A routed read whose range starts at or above the conversation's lowest hot seq never reads the archive
        (the backend's own plan of the routed SQL, and its per-table row counters); random ranges, orders and
        limits equal the mirror's answers, including a conversation that lives only in the archive."""
        # A conversation whose seq 5 was stored after the cutoff (two senders, the later seq stored first): the
        # archive moves seq 1..4 only, so every archived seq stays below the lowest hot one (what the read's guard
        # relies on); seq 6..10, older than the cutoff, wait in the hot table.
        odd = 1021  # shard 01
        odd_values = [msg_values(odd, s, "2026-07-15 09:00:00.000" if s == 5 else old_time(s)) for s in range(1, 11)]
        for target, port in ((f"{lp.MSG}_01", lp.msg_shard_port(odd)), (f"{lp.MIRROR_DB}.{lp.MSG}", DB0_PORT)):
            c = direct(port)
            with c.cursor() as cur:
                cur.executemany(MSG_INSERT.format(target), odd_values)
            c.close()
        admin = ap.admin(read_timeout=300)
        rows(admin, "ARCHIVE it_life_msg OLDER THAN 180 DAYS AS OF '2026-07-15'")  # seq 1..29 cold (idempotent)
        admin.close()
        c = direct(lp.msg_shard_port(odd))
        self.assertEqual([r[0] for r in rows(c, f"SELECT seq FROM {lp.MSG}_archive_01 WHERE conv_id = {odd} ORDER BY seq")],
                         [1, 2, 3, 4])
        c.close()
        # A conversation entirely archived (no hot row left): its reads must still find everything.
        gone = 1017  # shard 01, like 1001
        values = [msg_values(gone, s, old_time(s)) for s in range(1, 16)]
        c = direct(lp.msg_shard_port(gone))
        with c.cursor() as cur:
            cur.executemany(MSG_INSERT.format(f"{lp.MSG}_archive_01"), values)
        c.close()
        m = direct(DB0_PORT)
        with m.cursor() as cur:
            cur.executemany(MSG_INSERT.format(f"{lp.MIRROR_DB}.{lp.MSG}"), values)
        m.close()
        app, mirror = ap.app(), direct(DB0_PORT)
        try:
            lowest = {conv: rows(mirror, f"SELECT MIN(seq) FROM {lp.MIRROR_DB}.{lp.MSG} WHERE conv_id = %s AND "
                                         "created_at >= '2026-01-16'", (conv,))[0][0] for conv in CONVS}
            conv = 1001
            shard_port, hot, arch = lp.msg_shard_port(conv), f"{lp.MSG}_01", f"{lp.MSG}_archive_01"
            hot_reads = [f"SELECT seq, content FROM {lp.MSG} WHERE conv_id = {conv} AND seq >= {lowest[conv]} "
                         "ORDER BY seq LIMIT 10",
                         f"SELECT seq FROM {lp.MSG} WHERE conv_id = {conv} AND seq > 60 ORDER BY seq DESC LIMIT 3",
                         f"SELECT * FROM {lp.MSG} WHERE conv_id = {conv} AND seq = 70",
                         f"SELECT COUNT(*) FROM {lp.MSG} WHERE conv_id = {conv} AND seq BETWEEN 50 AND 80"]
            cold_read = f"SELECT seq FROM {lp.MSG} WHERE conv_id = {conv} AND seq > 10 ORDER BY seq LIMIT 5"

            def backend_plan(sql):
                routed = rows(app, "EXPLAIN SHARDS " + sql)[0][3]
                c = direct(shard_port)
                plan = rows(c, "EXPLAIN " + routed)
                c.close()
                return routed, plan

            def cold_branch(plan):  # EXPLAIN names a branch's table by its alias: find the branch by position
                branch = [r for r in plan if r[1] == "UNION"]
                self.assertEqual(len(branch), 1, plan)
                return branch[0]

            for sql in hot_reads:
                routed, plan = backend_plan(sql)
                self.assertIn(f"FROM `{arch}`", routed)  # the union is there ...
                cold = cold_branch(plan)  # ... its cold branch is an impossible range: no table is read
                self.assertEqual((cold[2], cold[3]), (None, None), (routed, plan))
                self.assertRegex(cold[9], "Impossible WHERE|no matching row", (routed, plan))
            routed, plan = backend_plan(cold_read)
            cold = cold_branch(plan)
            self.assertEqual((cold[3], cold[5]), ("range", "PRIMARY"), (routed, plan))
            # ORDER BY / LIMIT in both branches: each reads at most LIMIT rows.
            self.assertEqual(routed.count("ORDER BY seq LIMIT 5"), 3, routed)

            # The server's row counters agree: hot-range reads leave the archive's untouched.
            c = direct(shard_port)
            rows(c, "SET GLOBAL userstat = 1")
            stat = ("SELECT IFNULL(SUM(ROWS_READ), 0) FROM information_schema.TABLE_STATISTICS "
                    "WHERE TABLE_SCHEMA = 'im' AND TABLE_NAME = %s")
            try:
                before = rows(c, stat, (arch,))[0][0], rows(c, stat, (hot,))[0][0]
                for sql in hot_reads:
                    self.compare(app, mirror, sql)
                after = rows(c, stat, (arch,))[0][0], rows(c, stat, (hot,))[0][0]
                self.assertEqual(after[0], before[0])
                self.assertGreater(after[1], before[1])
                self.compare(app, mirror, cold_read)
                self.assertGreater(rows(c, stat, (arch,))[0][0], after[0])
            finally:
                rows(c, "SET GLOBAL userstat = 0")
                c.close()

            # Random ranges, orders and limits against the mirror.
            rng = random.Random(18)
            cols = ["seq", "conv_id, seq, msg_id", "seq, content, created_at", "*"]
            for i in range(400):
                conv = rng.choice(CONVS + [gone, odd])
                a, b = sorted(rng.randint(0, PER_CONV + 40) for _ in range(2))
                cond = rng.choice(["", f" AND seq > {a}", f" AND seq >= {a}", f" AND seq < {b}", f" AND seq <= {b}",
                                   f" AND seq BETWEEN {a} AND {b}", f" AND seq > {a} AND seq < {b}",
                                   f" AND seq = {a}", f" AND seq IN ({a}, {b})"])
                order = rng.choice(["seq", "seq DESC", "seq ASC", "conv_id, seq DESC"])
                limit = rng.choice(["", f" LIMIT {rng.randint(0, 60)}",
                                    f" LIMIT {rng.randint(1, 30)} OFFSET {rng.randint(0, 40)}",
                                    f" LIMIT {rng.randint(0, 20)}, {rng.randint(1, 30)}"])
                alias = rng.choice(["", " AS m"])
                sql = f"SELECT {rng.choice(cols)} FROM {lp.MSG}{alias} WHERE conv_id = {conv}{cond} ORDER BY {order}{limit}"
                self.compare(app, mirror, sql)
            # Several conversations (one shard, then a scatter over shards): no guard, pages still pushed down.
            for convs in ("1001, 1005", "1001, 1002, 1005, 1007"):
                for page in ("LIMIT 7 OFFSET 3", "LIMIT 40"):
                    self.compare(app, mirror, f"SELECT conv_id, seq FROM {lp.MSG} WHERE conv_id IN ({convs}) AND "
                                              f"seq > 20 ORDER BY seq DESC, conv_id {page}")
            for sql in (f"SELECT seq FROM {lp.MSG} WHERE conv_id = {odd} AND seq >= 6 ORDER BY seq LIMIT 3",
                        f"SELECT seq FROM {lp.MSG} WHERE conv_id = {odd} AND seq > 2 ORDER BY seq",
                        f"SELECT COUNT(*), MIN(seq), MAX(seq) FROM {lp.MSG} WHERE conv_id = {gone}",
                        f"SELECT seq FROM {lp.MSG} WHERE conv_id = {gone} AND seq > 3 ORDER BY seq DESC LIMIT 4"):
                self.assertNotEqual(self.compare(app, mirror, sql), ())
        finally:
            app.close()
            mirror.close()
            c = direct(lp.msg_shard_port(gone))
            for table in (f"{lp.MSG}_archive_01", f"{lp.MSG}_01"):
                rows(c, f"DELETE FROM {table} WHERE conv_id IN ({gone}, {odd})")
            c.close()
            m = direct(DB0_PORT)
            rows(m, f"DELETE FROM {lp.MIRROR_DB}.{lp.MSG} WHERE conv_id IN ({gone}, {odd})")
            m.close()


if __name__ == "__main__":
    unittest.main()
