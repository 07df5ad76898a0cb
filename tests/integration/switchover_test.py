"""Planned switchover, failover, fencing and rejoin against real GTID replication (issue 29).

A replication group of its own: scripts/cluster starts a primary and two
semi-synchronous (AFTER_SYNC) replicas on SP_SWITCH_PORT, +100, +200 in a
directory of its own; this test starts its own proxy in front of them with
auto_failover on and a SQLite cache.

Checked, in order (each step starts from the roles the one before left):
1. SWITCHOVER BACKEND db0 TO r1 while 4 writers insert and 4 readers read
   through the proxy: no client error, every acknowledged row is on the new
   primary afterwards, the old primary is read-only and replicates from r1,
   and no transaction with the old primary's server_id reaches any binary
   log after the switch position (it was never written again). The pause
   (held_ms) and the writers' longest wait are printed.
2. Refusals: SWITCHOVER to a server that is not a replica, to the primary
   itself, FAILOVER of a primary that answers; unknown backend.
3. SIGKILL of the new primary with 4 writers running: the proxy fails over
   by itself (auto_failover) to the most advanced replica, writes succeed
   again, and no acknowledged write is lost (semi-sync AFTER_SYNC). The
   time until the first write succeeds again is printed.
4. The killed server comes back writable (its read_only turned off by hand):
   the monitor sets it read-only again (never two writers); REJOIN makes it a
   replica of the new primary, or is refused because it holds a transaction
   the group lacks (a write that was never acknowledged), which is then
   verified directly.
5. The proxy restarted: it keeps the roles (SHOW TOPOLOGY, writes go to the
   current primary), from the SQLite cache.
6. The primary hangs (SIGSTOP) under 4 writers: it is failed over, the
   statements stuck on it fail instead of waiting, and after SIGCONT no write
   it may still apply was acknowledged: every acknowledged row is on the new
   primary; the hung server is fenced read-only.
Everything is torn down at the end, whatever failed.
"""
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
RUN_DIR = os.environ["SP_SWITCH_RUN_DIR"]
PRIMARY = int(os.environ.get("SP_SWITCH_PORT", "3377"))
R1, R2 = PRIMARY + 100, PRIMARY + 200
PORTS = {"db0": PRIMARY, "r1": R1, "r2": R2}
CLUSTER_DIR = os.path.join(RUN_DIR, "cluster")
WRITERS = 4
READERS = 4


def cluster(*args, timeout=240):
    return replication_group.cluster(REPO, CLUSTER_DIR, *args, timeout=timeout)


def slave_status(conn):
    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute("SHOW SLAVE STATUS")
        return cur.fetchone()


def wait_until(what, predicate, timeout=30.0):
    # Servers restart in these tests: an error counts as not yet.
    replication_group.wait_until(what, predicate, timeout, retry_errors=True)


CONFIG = """\
server:
  listen: 127.0.0.1:{port}
  admin_listen: 127.0.0.1:{admin}
cache: {cache}
users:
  - {{name: app, password: app_pw}}
  - {{name: reader, password: reader_pw, reads: replica}}
admin_users:
  - {{name: admin, password: admin_pw}}
{backends}ha:
  check_interval_ms: 100
  probe_timeout_ms: 500
  max_replica_lag_ms: 10000
  causal_read_timeout_ms: 500
  failure_timeout_ms: 1500
  switchover_timeout_ms: 5000
  auto_failover: true
"""


class Load(replication_group.Workers):
    """Writers insert (writer, n) rows and remember what was acknowledged;
    readers read. Errors are collected, not raised."""

    def __init__(self, port, writers=WRITERS, readers=READERS):
        super().__init__()
        self.port = port
        self.acked = []
        self.ack_times = []
        self.max_latency = 0.0
        self.threads = [threading.Thread(target=self.write, args=(w,)) for w in range(writers)]
        # Half the readers read replicas (users[].reads), half the primary.
        self.threads += [threading.Thread(target=self.read, args=("reader" if r % 2 else "app",))
                         for r in range(readers)]

    def connect(self, user):
        return pymysql.connect(host=HOST, port=self.port, user=user, password=f"{user}_pw", database="im",
                               autocommit=True, connect_timeout=10, read_timeout=30)

    def write(self, writer):
        def insert(conn, n, started):
            rows(conn, "INSERT INTO ha_rows (writer, n) VALUES (%s, %s)", (writer, n))
            latency = time.time() - started
            with self.lock:
                self.acked.append((writer, n))
                self.ack_times.append(time.time())
                self.max_latency = max(self.max_latency, latency)
        self.loop(lambda: self.connect("app"), insert, lambda n: f"writer {writer} row {n}")

    def read(self, user):
        self.loop(lambda: self.connect(user), lambda conn, _i, _t: scalar(conn, "SELECT COUNT(*) FROM ha_rows"),
                  lambda _: "reader")

    def acked_count(self):
        with self.lock:
            return len(self.acked)


class Switchover(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(RUN_DIR, exist_ok=True)
        # A fresh group every run: the last one ended with other roles and histories.
        cluster("wipe")
        cluster("up", "--ports", str(PRIMARY), "--replicas", "2", "--semi-sync")
        cls.server_ids = replication_group.prepare_group(PRIMARY, (R1, R2), PORTS)
        cls.port, cls.admin = free_ports(2)
        cls.config = os.path.join(RUN_DIR, "shardproxy.yaml")
        cache = os.path.join(RUN_DIR, "cache.sqlite")
        if os.path.exists(cache):
            os.remove(cache)
        with open(cls.config, "w", encoding="utf-8") as f:
            f.write(CONFIG.format(port=cls.port, admin=cls.admin, cache=cache,
                                  backends=replication_group.group_backends(PRIMARY, R1, R2, 32)))
        cls.log = open(os.path.join(RUN_DIR, "shardproxy.log"), "a")
        cls.start_proxy()

    @classmethod
    def start_proxy(cls):
        cls.proc = subprocess.Popen([BINARY, "--config", cls.config], stdout=cls.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while True:
            try:
                pymysql.connect(host=HOST, port=cls.port, user="app", password="app_pw", connect_timeout=5).close()
                break
            except pymysql.err.MySQLError:
                if time.time() > deadline or cls.proc.poll() is not None:
                    raise SystemExit("the test proxy did not start; see " + cls.log.name)
                time.sleep(0.2)
        wait_until("every server of the group probed up", cls.group_up, 30)

    @classmethod
    def group_up(cls):
        topology = cls.admin_rows("SHOW TOPOLOGY")[0]
        serving = [topology["primary"]] + [n for n in topology["replicas"].split(",") if n]
        return all(cls.server(n)["health"] == "up" for n in serving)

    @classmethod
    def stop_proxy(cls):
        cls.proc.send_signal(signal.SIGTERM)
        cls.proc.wait(timeout=30)

    @classmethod
    def tearDownClass(cls):
        try:
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
    def server(cls, name):
        for row in cls.admin_rows("SHOW BACKENDS"):
            if row["backend"] == name:
                return row
        raise AssertionError(f"SHOW BACKENDS has no row {name}")

    @classmethod
    def topology(cls):
        return cls.admin_rows("SHOW TOPOLOGY")[0]

    def assert_all_present(self, acked, port):
        missing = replication_group.missing_writes(acked, port)
        self.assertEqual(missing, [], f"{len(missing)} acknowledged writes missing on 127.0.0.1:{port}")

    def own_transactions_after(self, name, position):
        """Transactions written with `name`'s server_id past `position`, in every server's binary log."""
        return replication_group.transactions_after(PORTS.values(), self.server_ids[name], position)

    def test_1_switchover_under_load(self):
        with Load(self.port) as load:
            wait_until("writes flowing", lambda: load.acked_count() > 200, 30)
            result = self.admin_rows("SWITCHOVER BACKEND db0 TO r1")[0]
            before = load.acked_count()
            wait_until("writes flowing after the switch", lambda: load.acked_count() > before + 200, 30)
        print(f"switchover: held {result['held_ms']} ms (drained {result['drained_ms']} ms, replica caught up "
              f"{result['caught_up_ms']} ms); longest write {load.max_latency * 1000:.1f} ms; "
              f"{len(load.acked)} writes acknowledged", flush=True)
        self.assertEqual(load.errors, [], "no client error during a switchover")
        self.assertEqual((result["old_primary"], result["new_primary"]), ("db0", "r1"))
        self.assertEqual(result["problems"], "")
        topology = self.topology()
        self.assertEqual(topology["primary"], "r1")
        self.assertEqual(topology["address"], f"127.0.0.1:{R1}")
        self.assertEqual(set(topology["replicas"].split(",")), {"r2", "db0"})
        self.assert_all_present(load.acked, R1)
        with root(PRIMARY) as old:
            self.assertEqual(scalar(old, "SELECT @@global.read_only"), 1)
            wait_until("the old primary replicating from r1",
                       lambda: (slave_status(old) or {}).get("Master_Port") == R1 and
                       slave_status(old)["Slave_SQL_Running"] == "Yes")
        wait_until("every server up again in SHOW BACKENDS",
                   lambda: all(self.server(n)["health"] == "up" for n in PORTS), 30)
        self.assertEqual(self.server("r1")["role"], "primary")
        self.assertEqual(self.server("db0")["role"], "replica")
        stats = {r["series"]: r["value"] for r in self.admin_rows("SHOW STATS")}
        self.assertEqual(stats.get('shardproxy_backend_primary{backend="db0",server="r1"}'), "1")
        self.assertEqual(stats.get("shardproxy_topology_changes"), "1")
        self.assertEqual(stats.get('shardproxy_server_read_only{backend="db0",server="db0",role="replica"}'), "1")
        self.assertEqual(self.own_transactions_after("db0", result["position"]), [],
                         "the old primary took no write after the switch")
        with root(R1) as new_primary, root(PRIMARY) as old, root(R2) as other:
            pos = scalar(new_primary, "SELECT @@gtid_binlog_pos")
            for c in (old, other):
                self.assertEqual(scalar(c, "SELECT MASTER_GTID_WAIT(%s, 30)", (pos,)), 0)
                self.assertEqual(scalar(c, "SELECT COUNT(*) FROM im.ha_rows"),
                                 scalar(new_primary, "SELECT COUNT(*) FROM im.ha_rows"))

    def test_2_refusals_say_why(self):
        cases = [
            ("SWITCHOVER BACKEND db0 TO nosuch", 9140, "is not a replica of backend db0"),
            ("SWITCHOVER BACKEND db0 TO r1", 9140, "is not a replica of backend db0"),
            ("SWITCHOVER BACKEND dbX", 9140, "unknown backend"),
            ("FAILOVER BACKEND db0", 9140, "not down"),
            ("REJOIN BACKEND db0 SERVER r1", 9140, "is the primary"),
            ("SWITCHOVER db0", 1064, "SWITCHOVER BACKEND <backend>"),
        ]
        for sql, code, text in cases:
            with self.assertRaises(pymysql.err.MySQLError, msg=sql) as caught:
                self.admin_rows(sql)
            self.assertEqual(caught.exception.args[0], code, sql)
            self.assertIn(text, caught.exception.args[1], sql)
        self.assertEqual(self.topology()["primary"], "r1", "a refusal changes nothing")

    def test_3_auto_failover_loses_no_acknowledged_write(self):
        with Load(self.port, readers=2) as load:
            wait_until("writes flowing", lambda: load.acked_count() > 200, 30)
            with root(R1) as c:
                server_pid = int(scalar(c, "SELECT @@pid_file IS NOT NULL") or 0)  # answers: it is up
            self.assertEqual(server_pid, 1)
            killed = time.time()
            cluster("kill", str(R1))
            with load.lock:
                acked_at_kill = len(load.acked)
            wait_until("writes succeeding after the failover", lambda: load.acked_count() > acked_at_kill + 50, 60)
            with load.lock:
                # The last write acknowledged before the kill, and the first after the outage.
                before = [t for t in load.ack_times if t <= killed]
                gap_start = max(before) if before else killed
                after = [t for t in load.ack_times if t > gap_start + 0.2]
                recovered = (min(after) if after else time.time()) - killed
        topology = self.topology()
        print(f"failover: writes succeed again {recovered:.2f} s after SIGKILL of the primary "
              f"(ha.failure_timeout_ms 1500); {len(load.errors)} client errors meanwhile; new primary "
              f"{topology['primary']}; change: {topology['change']}", flush=True)
        self.assertIn(topology["primary"], ("db0", "r2"))
        self.assertIn("r1", topology["fenced"].split(","))
        self.assertIn("auto_failover", topology["change"])
        self.assertIn("none: semi-sync AFTER_SYNC", topology["change"])
        new_port = PORTS[topology["primary"]]
        self.assert_all_present(load.acked, new_port)
        self.assertEqual(self.server(topology["primary"])["role"], "primary")
        with root(new_port) as c:
            self.assertEqual(scalar(c, "SELECT @@global.read_only"), 0)

    def test_4_fenced_server_stays_read_only_and_rejoins(self):
        cluster("restart", str(R1))
        with root(R1) as c:
            rows(c, "SET GLOBAL read_only = 0")  # as a server started from an old config would be
            wait_until("the monitor setting the fenced server read-only",
                       lambda: scalar(c, "SELECT @@global.read_only") == 1, 10)
        topology = self.topology()
        primary_port = PORTS[topology["primary"]]
        try:
            self.admin_rows("SWITCHOVER BACKEND db0 TO r1")
            self.fail("a fenced server is not a switchover target")
        except pymysql.err.MySQLError as e:
            self.assertEqual(e.args[0], 9140)
        try:
            self.admin_rows("REJOIN BACKEND db0 SERVER r1")
        except pymysql.err.MySQLError as e:
            # Refused: r1 must hold a transaction the group lacks (written to
            # its binlog, never acknowledged to a client before it died).
            self.assertEqual(e.args[0], 9140, e.args[1])
            self.assertIn("transactions the primary", e.args[1])
            with root(R1) as c, root(primary_port) as p:
                own = scalar(c, "SELECT @@gtid_current_pos")
                group = scalar(p, "SELECT @@gtid_current_pos")
            self.assertNotEqual(own, group)
            print(f"rejoin refused as it must be: r1 at {own}, the primary at {group}", flush=True)
            return
        topology = self.topology()
        self.assertNotIn("r1", topology["fenced"].split(",") if topology["fenced"] else [])
        self.assertIn("r1", topology["replicas"].split(","))
        try:
            wait_until("r1 replicating and up", lambda: self.server("r1")["health"] == "up", 30)
        except AssertionError as e:
            with root(R1) as c:
                raise AssertionError(f"{e}: SHOW BACKENDS r1: {self.server('r1')}; SHOW SLAVE STATUS on r1: "
                                     f"{slave_status(c)}") from None

    def test_5_restart_keeps_the_roles(self):
        primary = self.topology()["primary"]
        self.stop_proxy()
        self.start_proxy()
        topology = self.topology()
        self.assertEqual(topology["primary"], primary, "the roles come back from the SQLite cache")
        with pymysql.connect(host=HOST, port=self.port, user="app", password="app_pw", database="im",
                             autocommit=True) as app:
            rows(app, "INSERT INTO ha_rows (writer, n) VALUES (99, 1)")
            self.assertEqual(scalar(app, "SELECT @@port"), PORTS[primary])

    def test_6_hung_primary_is_failed_over_and_cut_off(self):
        old = self.topology()["primary"]
        old_port = PORTS[old]
        with open(os.path.join(RUN_DIR, "cluster", str(old_port), "mysqld.pid"), encoding="utf-8") as f:
            pid = int(f.read().strip())
        with Load(self.port, readers=0) as load:
            try:
                wait_until("writes flowing", lambda: load.acked_count() > 200, 30)
            except AssertionError as e:
                raise AssertionError(f"{e}; {load.acked_count()} writes acknowledged, last client errors: "
                                     f"{load.errors[-3:]}") from e
            stopped = time.time()
            os.kill(pid, signal.SIGSTOP)
            try:
                wait_until("a failover away from the hung primary", lambda: self.topology()["primary"] != old, 30)
                with load.lock:
                    at_failover = len(load.acked)
                wait_until("writes succeeding on the new primary", lambda: load.acked_count() > at_failover + 50, 30)
            finally:
                os.kill(pid, signal.SIGCONT)
            resumed = time.time()
            # Give the resumed server the time to answer whatever it still had.
            time.sleep(1.0)
        topology = self.topology()
        print(f"hung primary: failed over to {topology['primary']} {resumed - stopped:.2f} s after SIGSTOP; "
              f"{len(load.errors)} client errors meanwhile", flush=True)
        self.assertIn(old, topology["fenced"].split(","))
        self.assert_all_present(load.acked, PORTS[topology["primary"]])
        with root(old_port) as c:
            wait_until("the resumed old primary fenced read-only", lambda: scalar(c, "SELECT @@global.read_only") == 1,
                       10)


if __name__ == "__main__":
    unittest.main(verbosity=2)
