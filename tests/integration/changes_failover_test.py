"""The change stream through a SWITCHOVER and a FAILOVER, from a replica, and
without column names in the binary log (issue 33, docs/changes.md).

A replication group of its own: scripts/cluster starts a primary db0 and two
semi-synchronous (AFTER_SYNC) replicas r1, r2 on SP_CHANGES_HA_PORT, +100,
+200; this test starts its own proxy in front of them (auto_failover on, a
SQLite cache) streaming the logical table msg (mod 2, both shards on db0).
Writer threads insert, edit and delete msg rows through the proxy, each on
keys of its own, remembering what was acknowledged; a consumer applies
GET /changes to a mirror (a dict by primary key), saving its position at
every transaction's end and reconnecting from it whenever the stream ends.

1. `source: primary`. SWITCHOVER db0 -> r1 under the writers: the stream's
   reader leaves db0 for r1 (a Binlog Dump connection of the proxy on r1,
   none left on db0). Then SIGKILL of r1: the proxy fails over by itself to
   the most advanced replica, and the reader follows to it. At the end the
   mirror equals the rows read through the proxy (0 lost, 0 extra), no
   change came twice, none out of order per row, no phantom insert, update
   or delete, and every acknowledged write is in the rows (semi-sync: none
   lost; a write whose statement failed at the kill may be there or not, as
   the proxy says).
2. `source: replicas` (the proxy restarted with it; the consumer resumes
   from its saved position): the primary has no Binlog Dump connection of
   the proxy, a replica has one, the changes written meanwhile all arrive,
   and shardproxy_changes_lag_seconds is on the metrics endpoint.
3. `binlog_row_metadata=MINIMAL` on every server: the rows still arrive with
   their column names (read from information_schema.COLUMNS, logged by the
   proxy); after ALTER TABLE ... ADD COLUMN the new column is in the images
   (the cached names refreshed).
Figures: events through the role changes, how long the stream was
interrupted by each (the longest gap between two changes received while
the writers ran), and the writers' own outage.
"""
import http.client
import json
import os
import random
import signal
import subprocess
import threading
import time
import unittest
import urllib.parse
import urllib.request

import pymysql

import replication_group
from free_ports import free_ports
from replication_group import root, rows, scalar

HOST = "127.0.0.1"
REPO = os.environ["SP_REPO_ROOT"]
BINARY = os.environ["SP_PROXY_BINARY"]
RUN_DIR = os.environ["SP_CHANGES_HA_RUN_DIR"]
PRIMARY = int(os.environ.get("SP_CHANGES_HA_PORT", "3367"))
R1, R2 = PRIMARY + 100, PRIMARY + 200
PORTS = {"db0": PRIMARY, "r1": R1, "r2": R2}
CLUSTER_DIR = os.path.join(RUN_DIR, "cluster")
WRITERS = 3
MSG_DDL = """CREATE TABLE {table} (
  conv_id BIGINT UNSIGNED NOT NULL, seq BIGINT UNSIGNED NOT NULL, msg_id BIGINT UNSIGNED NOT NULL,
  sender_uid BIGINT UNSIGNED NOT NULL, msg_type TINYINT UNSIGNED NOT NULL DEFAULT 1,
  content VARBINARY(4096) NOT NULL, status TINYINT UNSIGNED NOT NULL DEFAULT 0,
  created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (conv_id, seq), UNIQUE KEY uk_msg_id (msg_id)) ENGINE=InnoDB"""

MAP = """version: 1
tables:
  msg:
    key: conv_id
    method: mod
    shards: 2
    table: "msg_{shard:02}"
    backends: {db0: "0-1"}
    scatter: allow
"""

CONFIG = """\
server:
  listen: 127.0.0.1:{port}
  admin_listen: 127.0.0.1:{admin}
  metrics_listen: 127.0.0.1:{metrics}
cache: {cache}
users:
  - {{name: app, password: app_pw, default_database: im}}
admin_users:
  - {{name: admin, password: admin_pw}}
{backends}shard_map: {map}
ha:
  check_interval_ms: 100
  probe_timeout_ms: 500
  max_replica_lag_ms: 10000
  failure_timeout_ms: 1500
  switchover_timeout_ms: 5000
  auto_failover: true
changes: {{listen: 127.0.0.1:{changes}, tables: [msg], source: {source}, heartbeat_ms: 200, max_consumers: 3,
          buffer_events: 500}}
"""


def cluster(*args, timeout=240):
    return replication_group.cluster(REPO, CLUSTER_DIR, *args, timeout=timeout)


def wait_until(what, predicate, timeout=30.0):
    replication_group.wait_until(what, predicate, timeout, retry_errors=True)


class Writers(replication_group.Workers):
    """Inserts, edits and deletes of msg rows through the proxy, each writer on conv_ids of its own.
    `expected`: each row's content after the acknowledged writes (None: deleted); `unsure`: rows whose
    last statement failed (it may have committed or not)."""

    def __init__(self, port, first_tag):
        super().__init__()
        self.port = port
        self.expected, self.unsure = {}, set()
        self.acked_at = []
        self.threads = [threading.Thread(target=self.write, args=(w, first_tag + 10_000_000 * w))
                        for w in range(WRITERS)]

    def connect(self):
        return pymysql.connect(host=HOST, port=self.port, user="app", password="app_pw", database="im",
                               autocommit=True, connect_timeout=10, read_timeout=30)

    def write(self, writer, first_tag):
        rng = random.Random(first_tag)
        live = []
        state = {"tag": first_tag}

        def one(conn, _i, _started):
            state["tag"] += 1
            tag = state["tag"]
            text = f"w {tag}"
            op = rng.random()
            if not live or op < 0.5:
                pk = (1000 * (writer + 1) + rng.randrange(20), tag)
                sql, args = ("INSERT INTO msg (conv_id, seq, msg_id, sender_uid, content) VALUES (%s, %s, %s, 7, %s)",
                             (pk[0], pk[1], tag, text))
            elif op < 0.8:
                pk = rng.choice(live)
                sql, args = "UPDATE msg SET content = %s, status = 1 WHERE conv_id = %s AND seq = %s", (text, *pk)
            else:
                pk = live.pop(rng.randrange(len(live)))
                text = None
                sql, args = "DELETE FROM msg WHERE conv_id = %s AND seq = %s", pk
            try:
                rows(conn, sql, args)
            except pymysql.err.MySQLError:
                with self.lock:
                    self.unsure.add(pk)
                raise
            with self.lock:
                self.expected[pk] = text
                self.acked_at.append(time.time())
            if text is not None and pk not in live:
                live.append(pk)
            time.sleep(0.003)

        self.loop(self.connect, one, lambda i: f"writer {writer} write {i}")

    def count(self):
        with self.lock:
            return len(self.acked_at)


class Consumer(threading.Thread):
    """Applies GET /changes to a mirror at each transaction's last row; reconnects from the position of
    the last transaction applied (or heartbeat) whenever the stream ends."""

    def __init__(self, changes_port, position):
        super().__init__(daemon=True)
        self.changes_port = changes_port
        self.position = position
        self.mirror, self.seen, self.last_tag = {}, set(), {}
        self.problems, self.received_at, self.errors = [], [], []
        self.events = self.heartbeats = self.reconnects = 0
        self.columns = {}  # column names of the last image per physical table shard (conv_id % 2)
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.resp = None

    def apply(self, change, index):
        before, after, op = change.get("before"), change.get("after"), change["op"]
        image = after or before
        pk = (int(image["conv_id"]), int(image["seq"]))
        ident = (change["gtid"], index)
        if ident in self.seen:
            self.problems.append(f"duplicate {ident}")
        self.seen.add(ident)
        if (op == "insert") == (pk in self.mirror):
            self.problems.append(f"phantom {op} {pk}")
        if op == "delete":
            self.mirror.pop(pk, None)
            return
        text = after["content"]
        tag = int(text.split()[1])
        if tag <= self.last_tag.get(pk, -1):
            self.problems.append(f"out of order {pk}: {tag} after {self.last_tag[pk]}")
        self.last_tag[pk] = tag
        self.mirror[pk] = text
        self.columns[pk[0] % 2] = sorted(after)

    def stream(self):
        query = urllib.parse.urlencode({"tables": "msg", "from": self.position})
        conn = http.client.HTTPConnection(HOST, self.changes_port, timeout=10)
        try:
            conn.request("GET", "/changes?" + query)
            self.resp = conn.getresponse()
            if self.resp.status != 200:
                raise OSError(f"GET /changes: {self.resp.status} {self.resp.read()[:300]}")
            pending = []
            while not self.stop.is_set():
                line = self.resp.readline()
                if not line:
                    raise OSError("stream ended")
                change = json.loads(line)
                if "error" in change:
                    raise OSError(change["error"])
                with self.lock:
                    if change.get("heartbeat"):
                        self.heartbeats += 1
                        self.position = change["position"]
                        continue
                    self.heartbeats = 0
                    self.events += 1
                    self.received_at.append(time.time())
                    pending.append(change)
                    if change["last"]:
                        for i, c in enumerate(pending):
                            self.apply(c, i)
                        pending = []
                        self.position = change["position"]
        finally:
            if self.resp:
                self.resp.close()
            conn.close()

    def run(self):
        while not self.stop.is_set():
            try:
                self.stream()
            except (OSError, http.client.HTTPException, ValueError) as e:
                with self.lock:
                    self.reconnects += 1
                    self.errors.append(str(e))
                time.sleep(0.2)

    def caught_up(self):
        with self.lock:
            return self.heartbeats >= 3

    def longest_gap(self, start, end):
        """The longest time between two changes received in [start, end] (and the one before start)."""
        with self.lock:
            times = [t for t in self.received_at if t <= end]
        before = [t for t in times if t < start]
        times = ([before[-1]] if before else []) + [t for t in times if t >= start]
        return max((b - a for a, b in zip(times, times[1:])), default=0.0)


class ChangesThroughFailover(unittest.TestCase):
    consumer = None

    @classmethod
    def setUpClass(cls):
        os.makedirs(RUN_DIR, exist_ok=True)
        cluster("wipe")
        cluster("up", "--ports", str(PRIMARY), "--replicas", "2", "--semi-sync")
        with root(PRIMARY) as p:
            for shard in ("00", "01"):
                rows(p, f"DROP TABLE IF EXISTS im.msg_{shard}")
                rows(p, MSG_DDL.format(table=f"im.msg_{shard}"))
            gtid = scalar(p, "SELECT @@gtid_current_pos")
        for port in (R1, R2):
            with root(port) as c:
                assert scalar(c, "SELECT MASTER_GTID_WAIT(%s, 30)", (gtid,)) == 0
        cls.port, cls.admin, cls.metrics_port, cls.changes_port = free_ports(4)
        cls.config = os.path.join(RUN_DIR, "shardproxy.yaml")
        cls.map = os.path.join(RUN_DIR, "map.yaml")
        with open(cls.map, "w", encoding="utf-8") as f:
            f.write(MAP)
        cls.cache = os.path.join(RUN_DIR, "cache.sqlite")
        if os.path.exists(cls.cache):
            os.remove(cls.cache)
        cls.log_path = os.path.join(RUN_DIR, "shardproxy.log")
        cls.log = open(cls.log_path, "w")
        cls.start_proxy("primary")

    @classmethod
    def start_proxy(cls, source):
        with open(cls.config, "w", encoding="utf-8") as f:
            f.write(CONFIG.format(port=cls.port, admin=cls.admin, metrics=cls.metrics_port, cache=cls.cache,
                                  backends=replication_group.group_backends(PRIMARY, R1, R2, 32),
                                  map=cls.map, changes=cls.changes_port,
                                  source=source))
        cls.proc = subprocess.Popen([BINARY, "--config", cls.config], stdout=cls.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while True:
            try:
                pymysql.connect(host=HOST, port=cls.port, user="app", password="app_pw", connect_timeout=5).close()
                break
            except pymysql.err.MySQLError:
                if time.time() > deadline or cls.proc.poll() is not None:
                    raise SystemExit("the test proxy did not start; see " + cls.log_path)
                time.sleep(0.2)
        try:
            wait_until("the primary and a replica probed up", cls.group_up, 30)
        except AssertionError as e:
            raise AssertionError(f"{e}: SHOW TOPOLOGY {cls.admin_rows('SHOW TOPOLOGY')}; "
                                 f"SHOW BACKENDS {cls.admin_rows('SHOW BACKENDS')}") from None

    @classmethod
    def group_up(cls):
        """The primary and at least one replica up (the stream's two sources)."""
        topology = cls.admin_rows("SHOW TOPOLOGY")[0]
        replicas = [n for n in topology["replicas"].split(",") if n]
        health = {r["backend"]: r["health"] for r in cls.admin_rows("SHOW BACKENDS")}
        return health.get(topology["primary"]) == "up" and any(health.get(n) == "up" for n in replicas)

    @classmethod
    def replicas_up(cls):
        topology = cls.admin_rows("SHOW TOPOLOGY")[0]
        health = {r["backend"]: r["health"] for r in cls.admin_rows("SHOW BACKENDS")}
        return all(health.get(n) == "up" for n in topology["replicas"].split(",") if n)

    @classmethod
    def stop_proxy(cls):
        cls.proc.send_signal(signal.SIGTERM)
        cls.proc.wait(timeout=30)

    @classmethod
    def tearDownClass(cls):
        try:
            if cls.consumer:
                cls.consumer.stop.set()
            if getattr(cls, "proc", None) and cls.proc.poll() is None:
                cls.stop_proxy()
            if getattr(cls, "log", None):
                cls.log.close()
        finally:
            cluster("down", "--ports", ",".join(str(p) for p in (PRIMARY, R1, R2)))

    @classmethod
    def admin_rows(cls, sql):
        return replication_group.admin_rows(cls.admin, sql)

    @classmethod
    def primary(cls):
        return cls.admin_rows("SHOW TOPOLOGY")[0]["primary"]

    def dump_servers(self):
        """The servers of the group where the proxy holds a Binlog Dump connection (the change stream's
        reader; the replicas' own dumps are told apart by the client port, which is the proxy's)."""
        ss = subprocess.run(["ss", "-Htnp", "state", "established"], capture_output=True, text=True).stdout
        proxy_ports = set()  # (server port, the proxy's local port) of every connection of the proxy
        for line in ss.splitlines():
            if f"pid={self.proc.pid}," in line:
                local, peer = line.split()[2:4]
                proxy_ports.add((int(peer.rsplit(":", 1)[1]), local.rsplit(":", 1)[1]))
        found = set()
        for name, port in PORTS.items():
            try:
                c = root(port)
            except pymysql.err.MySQLError:
                continue  # the killed server
            with c:
                for (host,) in rows(c, "SELECT HOST FROM information_schema.PROCESSLIST WHERE COMMAND LIKE "
                                       "'Binlog Dump%'"):
                    if (port, host.rsplit(":", 1)[-1]) in proxy_ports:
                        found.add(name)
        return found

    def oracle(self):
        with pymysql.connect(host=HOST, port=self.port, user="app", password="app_pw", database="im") as app:
            return {(int(r[0]), int(r[1])): r[2].decode() for r in rows(app, "SELECT conv_id, seq, content FROM msg")}

    def assert_stream_complete(self, consumer, writers):
        wait_until("the consumer caught up", consumer.caught_up, 60)
        oracle = self.oracle()
        with consumer.lock:
            mirror = dict(consumer.mirror)
            problems = list(consumer.problems)
        lost = sorted(set(oracle) - set(mirror))
        extra = sorted(set(mirror) - set(oracle))
        differ = sorted(k for k in set(oracle) & set(mirror) if oracle[k] != mirror[k])
        self.assertEqual((lost[:5], extra[:5], differ[:5]), ([], [], []),
                         f"mirror vs rows through the proxy: {len(lost)} lost, {len(extra)} extra, "
                         f"{len(differ)} different")
        self.assertEqual(problems[:10], [], f"{len(problems)} duplicated, phantom or out-of-order changes")
        with writers.lock:
            acked_lost = [pk for pk, text in writers.expected.items()
                          if pk not in writers.unsure and oracle.get(pk) != text]
        self.assertEqual(acked_lost[:5], [], f"{len(acked_lost)} acknowledged writes not in the rows")
        return len(oracle)

    def test_1_switchover_and_failover_with_source_primary(self):
        cls = type(self)
        with root(PRIMARY) as p:
            start = "db0:" + scalar(p, "SELECT @@gtid_binlog_pos")
        consumer = cls.consumer = Consumer(self.changes_port, start)
        consumer.start()
        wait_until("the stream reading db0", lambda: self.dump_servers() == {"db0"}, 15)
        with Writers(self.port, 1_000_000) as writers:
            wait_until("writes flowing", lambda: writers.count() > 300, 30)
            switched = time.time()
            result = self.admin_rows("SWITCHOVER BACKEND db0 TO r1")[0]
            self.assertEqual(result["new_primary"], "r1")
            wait_until("the stream's reader following the switchover to r1",
                       lambda: self.dump_servers() == {"r1"}, 15)
            at_switch = writers.count()
            wait_until("writes flowing on r1", lambda: writers.count() > at_switch + 300, 30)
            events_before_kill = consumer.events
            killed = time.time()
            cluster("kill", str(R1))
            wait_until("a failover away from r1", lambda: self.primary() != "r1", 30)
            new_primary = self.primary()
            wait_until(f"the stream's reader following the failover to {new_primary}",
                       lambda: self.dump_servers() == {new_primary}, 30)
            with writers.lock:
                at_failover = len(writers.acked_at)
            wait_until("writes flowing after the failover", lambda: writers.count() > at_failover + 300, 60)
        # The failover repoints the other replica after publishing the roles: let it finish before the
        # proxy restarts in test_2 (a restart in the middle leaves that replica stopped).
        wait_until("every replica of the new primary up", self.replicas_up, 60)
        with writers.lock:
            acked = sorted(writers.acked_at)
        write_outage = max((b - a for a, b in zip(acked, acked[1:]) if b > killed - 1), default=0.0)
        rows_now = self.assert_stream_complete(consumer, writers)
        switch_gap = consumer.longest_gap(switched, killed - 0.5)
        kill_gap = consumer.longest_gap(killed, time.time())
        print(f"source primary: {consumer.events} changes through SWITCHOVER db0->r1 and FAILOVER r1->{new_primary} "
              f"({consumer.events - events_before_kill} after the kill), {len(acked)} writes acknowledged, "
              f"{len(writers.errors)} writer errors, {rows_now} rows; stream interrupted at most "
              f"{switch_gap * 1000:.0f} ms by the switchover (held {result['held_ms']} ms) and "
              f"{kill_gap:.2f} s by the SIGKILL and failover (writers' outage {write_outage:.2f} s); "
              f"{consumer.reconnects} consumer reconnections", flush=True)

    def test_2_source_replicas(self):
        cls = type(self)
        consumer = cls.consumer
        self.assertIsNotNone(consumer, "runs after test_1")
        consumer.stop.set()  # it stops at its next line (a heartbeat at the latest), nothing half applied
        consumer.join(timeout=15)
        self.assertFalse(consumer.is_alive())
        self.stop_proxy()
        self.start_proxy("replicas")
        primary = self.primary()
        resumed = Consumer(self.changes_port, consumer.position)
        resumed.mirror, resumed.seen, resumed.last_tag = consumer.mirror, consumer.seen, consumer.last_tag
        cls.consumer = resumed
        resumed.start()
        wait_until("the stream reading a replica", lambda: self.dump_servers() - {primary}, 15)
        with Writers(self.port, 50_000_000) as writers:
            wait_until("writes flowing", lambda: writers.count() > 300, 30)
        self.assertEqual(self.dump_servers() & {primary}, set(), "no Binlog Dump of the proxy on the primary")
        read = self.dump_servers()
        self.assertEqual(len(read), 1, read)
        rows_now = self.assert_stream_complete(resumed, writers)
        with urllib.request.urlopen(f"http://{HOST}:{self.metrics_port}/metrics", timeout=10) as r:
            metrics = r.read().decode()
        self.assertRegex(metrics, r"(?m)^shardproxy_changes_lag_seconds \d")
        print(f"source replicas: reading {sorted(read)[0]} (primary {primary}); {resumed.events} changes after the "
              f"resume, {rows_now} rows, mirror complete", flush=True)

    def test_3_minimal_row_metadata(self):
        consumer = type(self).consumer
        self.assertIsNotNone(consumer, "runs after test_2")
        live = [n for n, p in PORTS.items() if n != "r1"]
        for name in live:
            with root(PORTS[name]) as c:
                rows(c, "SET GLOBAL binlog_row_metadata = MINIMAL")
        with Writers(self.port, 70_000_000) as writers:
            wait_until("writes flowing", lambda: writers.count() > 200, 30)
        self.assert_stream_complete(consumer, writers)
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            log = f.read()
        self.assertRegex(log, r"column names of im\.msg_0[01] read from information_schema")
        # A schema change: the names are read again for the new TABLE_MAP.
        with root(PORTS[self.primary()]) as p:
            rows(p, "ALTER TABLE im.msg_00 ADD COLUMN note INT NULL, ALGORITHM=INSTANT")
            rows(p, "ALTER TABLE im.msg_01 ADD COLUMN note INT NULL, ALGORITHM=INSTANT")
        with Writers(self.port, 90_000_000) as writers:
            wait_until("writes flowing", lambda: writers.count() > 200, 30)
        self.assert_stream_complete(consumer, writers)
        with consumer.lock:
            columns = dict(consumer.columns)
        self.assertIn("note", columns.get(0, []), columns)
        self.assertIn("note", columns.get(1, []), columns)
        for name in live:
            with root(PORTS[name]) as c:
                self.assertEqual(scalar(c, "SELECT @@global.binlog_row_metadata"), "MINIMAL")
        print(f"binlog_row_metadata=MINIMAL: {consumer.events} changes with names from information_schema, "
              f"refreshed after ADD COLUMN", flush=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
