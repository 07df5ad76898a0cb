"""Role changes of a replication group in a fleet of three proxies (issue 29, part 6).

A semi-synchronous (AFTER_SYNC) group of its own (scripts/cluster: primary on
SP_FLEET_HA_PORT, replicas on +100 and +200, in a directory of its own), one
etcd member of its own (scripts/fleet's EtcdCluster) and three proxies p1..p3
with ha.auto_failover on. Checked, in order:
1. SWITCHOVER on p2 while writers run through all three proxies: every proxy
   applies the new roles, no client gets an error (the other proxies held
   the group's statements while it ran), every acknowledged row is on the new
   primary, and no transaction with the old primary's server_id is in any
   binary log past the switch position (never written again).
2. With etcd stopped, no proxy changes roles: SWITCHOVER is refused (9140,
   naming etcd), and a killed primary is not failed over by anyone while
   etcd is away, although every proxy sees it down.
3. etcd back: exactly one proxy (the one holding ha/leader) fails the group
   over; all three apply the same new roles; writes through every proxy
   succeed again; no acknowledged row is lost.
Everything is torn down at the end, whatever failed. Figures are printed, never
asserted as timings.
"""
import importlib.machinery
import importlib.util
import os
import signal
import subprocess
import threading
import time
import unittest

import pymysql

import replication_group
from free_ports import free_ports
from replication_group import root, rows, scalar

HOST = "127.0.0.1"
REPO = os.environ["SP_REPO_ROOT"]
BINARY = os.environ["SP_PROXY_BINARY"]
RUN_DIR = os.environ["SP_FLEET_HA_RUN_DIR"]
PRIMARY = int(os.environ.get("SP_FLEET_HA_PORT", "3397"))
ETCD_PORT = int(os.environ.get("SP_FLEET_HA_ETCD_PORT", "23794"))
R1, R2 = PRIMARY + 100, PRIMARY + 200
PORTS = {"db0": PRIMARY, "r1": R1, "r2": R2}
CLUSTER_DIR = os.path.join(RUN_DIR, "cluster")
NAMES = ("p1", "p2", "p3")

_loader = importlib.machinery.SourceFileLoader("fleet_script", os.path.join(REPO, "scripts", "fleet"))
_spec = importlib.util.spec_from_loader("fleet_script", _loader)
fleet = importlib.util.module_from_spec(_spec)
_loader.exec_module(fleet)

CONFIG = """\
server:
  listen: 127.0.0.1:{port}
  admin_listen: 127.0.0.1:{admin}
  threads: 1
cache: {cache}
users:
  - {{name: app, password: app_pw}}
admin_users:
  - {{name: admin, password: admin_pw}}
{backends}ha:
  check_interval_ms: 100
  probe_timeout_ms: 500
  max_replica_lag_ms: 10000
  failure_timeout_ms: 1500
  switchover_timeout_ms: 5000
  auto_failover: true
fleet:
  name: {name}
  etcd:
    endpoints: [http://127.0.0.1:{etcd}]
    prefix: /shardproxy/fleet-ha-{pid}
  lease_ttl_s: 3
  retry_max_ms: 500
"""


def cluster(*args, timeout=240):
    return replication_group.cluster(REPO, CLUSTER_DIR, *args, timeout=timeout)


def wait_until(what, predicate, timeout=30.0):
    replication_group.wait_until(what, predicate, timeout, retry_errors=True)


class Proxy:
    def __init__(self, name):
        self.name = name
        self.port, self.admin = free_ports(2)
        self.dir = os.path.join(RUN_DIR, name)
        os.makedirs(self.dir, exist_ok=True)
        self.config = os.path.join(self.dir, "shardproxy.yaml")
        cache = os.path.join(self.dir, "cache.sqlite")
        if os.path.exists(cache):
            os.remove(cache)
        with open(self.config, "w", encoding="utf-8") as f:
            f.write(CONFIG.format(port=self.port, admin=self.admin, cache=cache,
                                  backends=replication_group.group_backends(PRIMARY, R1, R2, 16),
                                  name=name, etcd=ETCD_PORT, pid=os.getpid()))
        self.log_path = os.path.join(self.dir, "shardproxy.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([BINARY, "--config", self.config], stdout=self.log, stderr=subprocess.STDOUT)

    def admin_rows(self, sql):
        return replication_group.admin_rows(self.admin, sql)

    def topology(self):
        return self.admin_rows("SHOW TOPOLOGY")[0]

    def health(self, server):
        for row in self.admin_rows("SHOW BACKENDS"):
            if row["backend"] == server:
                return row["health"]
        return None

    def log_text(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


class Load(replication_group.Workers):
    """Writers through every proxy insert (writer, n) and remember what was acknowledged."""

    runs = 0  # each load writes under writer ids of its own: (writer, n) is unique in the table

    def __init__(self, proxies, per_proxy=2):
        super().__init__()
        Load.runs += 1
        base = Load.runs * 100
        self.acked = []
        self.threads = [threading.Thread(target=self.write, args=(p, base + i * 10 + w))
                        for i, p in enumerate(proxies) for w in range(per_proxy)]

    def write(self, proxy, writer):
        def connect():
            return pymysql.connect(host=HOST, port=proxy.port, user="app", password="app_pw", database="im",
                                   autocommit=True, connect_timeout=10, read_timeout=30)

        def insert(conn, n, _started):
            rows(conn, "INSERT INTO ha_rows (writer, n) VALUES (%s, %s)", (writer, n))
            with self.lock:
                self.acked.append((writer, n))
        self.loop(connect, insert, lambda n: f"{proxy.name} writer {writer} row {n}")

    def count(self):
        with self.lock:
            return len(self.acked)


class FleetFailover(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(RUN_DIR, exist_ok=True)
        cls.proxies = []
        cls.etcd = fleet.EtcdCluster(RUN_DIR, [ETCD_PORT], [ETCD_PORT + 10], token=f"fleet-ha-{os.getpid()}")
        cls.etcd.destroy()
        cluster("wipe")
        try:
            cluster("up", "--ports", str(PRIMARY), "--replicas", "2", "--semi-sync")
            cls.server_ids = replication_group.prepare_group(PRIMARY, (R1, R2), PORTS)
            cls.etcd.start(fresh=True)
            cls.proxies = [Proxy(n) for n in NAMES]
            for p in cls.proxies:
                wait_until(f"{p.name} answers", lambda p=p: p.admin_rows("SHOW TOPOLOGY") is not None, 30)
            for p in cls.proxies:
                wait_until(f"{p.name} sees the group up",
                           lambda p=p: all(p.health(n) == "up" for n in ("db0", "r1", "r2")), 30)
            wait_until("three proxies in the fleet", lambda: len(cls.proxies[0].admin_rows("SHOW FLEET")) == 3, 30)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            for p in getattr(cls, "proxies", []):
                p.stop()
            cls.etcd.destroy()
        finally:
            cluster("down", "--ports", ",".join(str(p) for p in PORTS.values()))

    def setUp(self):
        for p in self.proxies:
            self.assertIsNone(p.proc.poll(), f"{p.name} died; see {p.log_path}")

    def primaries(self):
        return [p.topology()["primary"] for p in self.proxies]

    def assert_all_present(self, acked, port):
        missing = replication_group.missing_writes(acked, port)
        self.assertEqual(missing, [], f"{len(missing)} acknowledged writes missing on 127.0.0.1:{port}")

    def own_transactions_after(self, name, position):
        return replication_group.transactions_after(PORTS.values(), self.server_ids[name], position)

    def test_1_switchover_on_one_proxy_moves_all(self):
        with Load(self.proxies) as load:
            wait_until("writes before the switch", lambda: load.count() >= 60, 30)
            before = load.count()
            result = self.proxies[1].admin_rows("SWITCHOVER BACKEND db0 TO r1")[0]
            wait_until("every proxy on r1", lambda: self.primaries() == ["r1"] * 3, 10)
            started = load.count()
            wait_until("writes after the switch", lambda: load.count() >= started + 60, 30)
        print(f"fleet switchover: held_ms {result['held_ms']} on p2, writes before {before}, after {load.count()}, "
              f"problems '{result['problems']}'", flush=True)
        self.assertEqual(load.errors, [], "client errors during the fleet's switchover")
        for p in self.proxies:
            self.assertIn("switchover db0 -> r1", p.topology()["change"])
        self.assert_all_present(load.acked, R1)
        with root(PRIMARY) as c:
            self.assertEqual(scalar(c, "SELECT @@read_only"), 1)
        self.assertEqual(self.own_transactions_after("db0", result["position"]), [],
                         "the old primary was written after the switch")

    def test_2_cut_off_from_etcd_no_role_changes(self):
        self.etcd.stop()
        try:
            with self.assertRaises(pymysql.err.MySQLError) as refused:
                self.proxies[0].admin_rows("SWITCHOVER BACKEND db0 TO r2")
            self.assertEqual(refused.exception.args[0], 9140, refused.exception.args)
            self.assertIn("etcd", refused.exception.args[1])
            # The primary dies while etcd is away: every proxy sees it down, none promotes.
            marks = [len(p.log_text()) for p in self.proxies]
            cluster("kill", str(R1))
            wait_until("r1 down everywhere", lambda: all(p.health("r1") == "down" for p in self.proxies), 20)
            time.sleep(2.0)  # more than failure_timeout_ms beyond down
            self.assertEqual(self.primaries(), ["r1"] * 3)
            for p, mark in zip(self.proxies, marks):
                self.assertNotIn("failing over", p.log_text()[mark:], f"{p.name} tried to fail over without etcd")
            with root(R2) as c:
                self.assertEqual(scalar(c, "SELECT @@read_only"), 1, "r2 was promoted without etcd")
            type(self).marks = marks
        finally:
            self.etcd.start()

    def test_3_etcd_back_one_proxy_fails_over(self):
        started = time.time()
        def on_new_primary():
            # One reading of the three: read twice, the first could see all on r1 and the second p1 on r2.
            primaries = self.primaries()
            return len(set(primaries)) == 1 and primaries[0] in ("db0", "r2")
        wait_until("every proxy on a new primary", on_new_primary, 40)
        elapsed = time.time() - started
        new_primary = self.primaries()[0]
        changes = [p.topology()["change"] for p in self.proxies]
        self.assertEqual(len(set(changes)), 1, changes)
        deciders = [p.name for p, mark in zip(self.proxies, self.marks) if "failing over" in p.log_text()[mark:]]
        self.assertEqual(len(deciders), 1, f"proxies that tried to fail over: {deciders}")
        self.assertIn(f"auto_failover on {deciders[0]}", changes[0])
        with Load(self.proxies) as load:
            wait_until("writes on the new primary through every proxy", lambda: load.count() >= 60, 30)
        print(f"fleet failover: decided by {deciders[0]}, all three on {new_primary} {elapsed:.2f} s after etcd "
              f"returned; {load.count()} writes after, errors {len(load.errors)}", flush=True)
        self.assertEqual(load.errors, [])
        self.assert_all_present(load.acked, PORTS[new_primary])


if __name__ == "__main__":
    unittest.main(verbosity=2)
