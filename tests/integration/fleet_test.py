"""A fleet of three proxies on a real 3-member etcd cluster (issue 19).

Run by ctest as integration.fleet (tests/integration/fleet.cmake), or by hand:
  cd tests/integration && SP_PROXY_BINARY=../../build/proxy/shardproxy /usr/bin/python3 -m unittest -v fleet_test

etcd members and proxies come from scripts/fleet (EtcdCluster, FleetProxy);
etcd's data and every process are removed in tearDownClass, also after a
failure. Ports: SP_FLEET_ETCD_PORTS, SP_FLEET_PEER_PORTS (client and peer ports
of the three members), SP_FLEET_PROXY_PORTS (three listen ports; admin =
port + 1; free ports when unset). The convergence figures are printed, never
asserted as timings.
"""
import importlib.machinery
import importlib.util
import os
import random
import shutil
import socket
import statistics
import threading
import time
import unittest

import pymysql

import admin_proxy as ap
from free_ports import free_ports

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
_loader = importlib.machinery.SourceFileLoader("fleet_script", os.path.join(REPO_ROOT, "scripts", "fleet"))
_spec = importlib.util.spec_from_loader("fleet_script", _loader)
fleet = importlib.util.module_from_spec(_spec)
_loader.exec_module(fleet)

RUN_ROOT = os.environ.get("SP_FLEET_IT_DIR", os.path.join(REPO_ROOT, "build", "tests", "integration", "fleet-run"))
ETCD_PORTS = [int(p) for p in os.environ.get("SP_FLEET_ETCD_PORTS", "23791,23792,23793").split(",")]
PEER_PORTS = [int(p) for p in os.environ.get("SP_FLEET_PEER_PORTS", "23801,23802,23803").split(",")]


def proxy_ports():
    if os.environ.get("SP_FLEET_PROXY_PORTS"):
        return [int(p) for p in os.environ["SP_FLEET_PROXY_PORTS"].split(",")]
    # A free port whose successor (the admin port) is free too. The kernel
    # hands out ephemeral ports in random order, so waiting for it to return
    # two consecutive ones could take for ever: probe the successor instead.
    ports = []
    for _ in range(200):
        (a,) = free_ports(1)
        probe = socket.socket()
        try:
            probe.bind((ap.HOST, a + 1))
        except OSError:
            continue
        finally:
            probe.close()
        ports.append(a)
        if len(ports) == 3:
            return ports
    raise RuntimeError("no three free pairs of consecutive loopback ports in 200 tries")


RELOADS = int(os.environ.get("SP_FLEET_RELOADS", "20"))
V1 = dict(s01="0-31", s02="32-63")
V2 = dict(s01="0-16,18-31", s02="17,32-63")  # bucket 17 on db1
V3 = dict(s01="0-15", s02="16-63")  # differs from both
KEY17 = ap.keys_in_bucket(17, 1)[0]


def admin(proxy, **kw):
    return pymysql.connect(host=ap.HOST, port=proxy.admin_port, user="admin", password="admin_pw",
                           connect_timeout=5, read_timeout=30, **kw)


def app(proxy):
    return pymysql.connect(host=ap.HOST, port=proxy.port, user="app", password="app_pw", database="im",
                           autocommit=True, connect_timeout=5, read_timeout=30)


def version_of(conn):
    versions = {int(r[0]) for r in ap.rows(conn, "SHOW SHARD MAP")}
    assert len(versions) == 1, versions
    return versions.pop()


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


class FleetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(RUN_ROOT, exist_ok=True)
        cls.etcd = fleet.EtcdCluster(RUN_ROOT, ETCD_PORTS, PEER_PORTS, token=f"it-{os.getpid()}")
        cls.etcd.destroy()  # whatever an interrupted run left
        cls.proxies = []
        try:
            ap.create_tables()
            cls.etcd.start(fresh=True)
            binary = os.environ.get("SP_PROXY_BINARY", os.path.join(REPO_ROOT, "build", "proxy", "shardproxy"))
            base = os.path.join(REPO_ROOT, "conf", "shardproxy.yaml")
            db_ports = [ap.DB0_PORT, ap.DB1_PORT]
            for name, port in zip(fleet.NAMES, proxy_ports()):
                p = fleet.FleetProxy(RUN_ROOT, name, port, binary)
                shutil.rmtree(os.path.join(p.dir, "cache"), ignore_errors=True)  # an earlier run's history
                p.write_config(fleet.proxy_config(base, name, port, port + 1, p.dir, cls.etcd.endpoints(),
                                                  f"/shardproxy/it-{os.getpid()}", db_ports))
                p.write_map(ap.map_text(1, **V1))
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
        try:
            ap.drop_tables()
        except Exception:
            pass

    @classmethod
    def wait_fleet(cls, count, timeout=20, proxy=None):
        """SHOW FLEET on `proxy` (the first) until it lists `count` proxies on one version."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                c = admin(proxy or cls.proxies[0])
                last = ap.dict_rows(c, "SHOW FLEET")
                c.close()
                if len(last) == count and len({r["version"] for r in last}) == 1:
                    return last
            except pymysql.err.MySQLError as e:
                last = e
            time.sleep(0.1)
        raise AssertionError(f"fleet of {count} not converged: {last}")

    def setUp(self):
        for p in self.proxies:
            self.assertTrue(p.alive(), f"{p.name} died; see {p.log_path}")

    def versions(self):
        out = []
        for p in self.proxies:
            c = admin(p)
            out.append(version_of(c))
            c.close()
        return out

    def wait_versions(self, version, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.versions() == [version] * 3:
                return
            time.sleep(0.05)
        self.fail(f"not every proxy serves version {version}: {self.versions()}")

    def reload_on(self, proxy, version, shards):
        proxy.write_map(ap.map_text(version, **shards))
        c = admin(proxy)
        try:
            return ap.dict_rows(c, "RELOAD SHARD MAP")[0]
        finally:
            c.close()

    def reload_after_outage(self, proxy, timeout=15):
        """RELOAD SHARD MAP, retried only until the proxy is back in session with etcd."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                c = admin(proxy)
                try:
                    return ap.dict_rows(c, "RELOAD SHARD MAP")[0]
                finally:
                    c.close()
            except pymysql.err.OperationalError as e:
                self.assertLess(time.monotonic(), deadline, e)
                time.sleep(0.2)

    # ---- one map for all ----

    def test_1_every_proxy_registered_with_the_same_map(self):
        rows = self.wait_fleet(3)
        self.assertEqual(sorted(r["name"] for r in rows), ["p1", "p2", "p3"])
        self.assertEqual([r["this_proxy"] for r in rows if r["name"] == "p1"], ["yes"])
        self.assertEqual(self.versions(), [self.versions()[0]] * 3)

    def test_2_reload_on_one_converges_on_all(self):
        """RELOAD on each proxy in turn; the others poll SHOW SHARD MAP until they serve it."""
        pollers = [admin(p) for p in self.proxies]
        latencies, reload_ms = [], []
        try:
            for i in range(RELOADS):
                version = version_of(pollers[0]) + 1
                publisher = i % 3
                shards = V2 if i % 2 == 0 else V1
                sent = time.monotonic()
                row = self.reload_on(self.proxies[publisher], version, shards)
                ok_at = time.monotonic()
                reload_ms.append((ok_at - sent) * 1000)
                self.assertEqual((row["result"], int(row["new_version"])), ("applied", version), row)
                for j in range(3):
                    if j == publisher:
                        continue
                    while version_of(pollers[j]) != version:
                        self.assertLess(time.monotonic() - ok_at, 10, f"{self.proxies[j].name} did not converge")
                        time.sleep(0.002)
                    latencies.append((time.monotonic() - ok_at) * 1000)
            # The last map routes bucket 17 the same way on every proxy (shards alternate V2, V1).
            expected = "db1" if (RELOADS - 1) % 2 == 0 else "db0"
            for p in self.proxies:
                c = app(p)
                self.assertEqual(ap.route_backend(c, KEY17)[1], expected, p.name)
                c.close()
            # Followers recorded the fleet's map in their own SQLite history.
            history = ap.dict_rows(pollers[1], "SHOW SHARD MAP HISTORY")
            self.assertTrue(any(r["applied_by"].startswith("fleet:p1 ") for r in history), history[:3])
        finally:
            for c in pollers:
                c.close()
        print(f"\nfleet convergence over {RELOADS} reloads ({len(latencies)} follower applications), "
              f"ms after the publisher's OK: p50 {statistics.median(latencies):.1f}, "
              f"p99 {percentile(latencies, 99):.1f}, max {max(latencies):.1f}; the RELOAD itself (publish + "
              f"apply, client side): p50 {statistics.median(reload_ms):.1f}, p99 {percentile(reload_ms, 99):.1f}",
              flush=True)

    def test_3_rollback_on_one_rolls_back_all(self):
        current = self.versions()[0]
        row = self.reload_on(self.proxies[1], current + 1, V2)
        self.assertEqual(row["result"], "applied")
        self.wait_versions(current + 1)
        c = admin(self.proxies[2])
        row = ap.dict_rows(c, f"ROLLBACK SHARD MAP TO {current}")[0]
        c.close()
        self.assertEqual((row["result"], int(row["new_version"])), ("applied", current), row)
        self.wait_versions(current)
        # A stale reload (not above the fleet's version) is refused locally, nothing published.
        self.proxies[0].write_map(ap.map_text(current, **V3))
        c = admin(self.proxies[0])
        with self.assertRaises(pymysql.err.OperationalError) as e:
            ap.rows(c, "RELOAD SHARD MAP")
        c.close()
        self.assertIn("must be greater than the running version", e.exception.args[1])
        self.assertEqual(self.versions(), [current] * 3)

    # ---- coordination outages ----

    def load(self, stop, errors, counts):
        """One client per proxy: INSERT and point SELECT in a loop."""
        def run(p, n):
            try:
                c = app(p)
            except Exception as e:  # a refused connection is a client error too
                errors.append(f"{p.name}: connect: {e}")
                return
            msg_id = 0
            while not stop.is_set():
                msg_id += 1
                key = 1000 + n * 100 + random.randrange(50)
                try:
                    ap.rows(c, f"INSERT INTO {ap.TABLE} (peer_id, msg_id, body) VALUES (%s, %s, 'x') "
                               "ON DUPLICATE KEY UPDATE body = 'y'", (key, msg_id))
                    ap.rows(c, f"SELECT COUNT(*) FROM {ap.TABLE} WHERE peer_id = %s", (key,))
                    counts[n] += 2
                except Exception as e:
                    errors.append(f"{p.name}: {e}")
            c.close()
        threads = [threading.Thread(target=run, args=(p, n)) for n, p in enumerate(self.proxies)]
        for t in threads:
            t.start()
        return threads

    def test_4_etcd_leader_killed_under_load(self):
        stop, errors, counts = threading.Event(), [], [0, 0, 0]
        threads = self.load(stop, errors, counts)
        try:
            time.sleep(1)
            leader = self.etcd.leader()
            self.assertIsNotNone(leader)
            self.etcd.stop(leader, kill=True)
            time.sleep(2)
            # The fleet still publishes and converges on the two members left.
            version = self.versions()[0] + 1
            row = self.reload_on(self.proxies[0], version, V1)
            self.assertEqual(row["result"], "applied", row)
            self.wait_versions(version)
            self.etcd.start(leader)
            time.sleep(1)
        finally:
            stop.set()
            for t in threads:
                t.join()
        print(f"\nleader {leader} killed: {sum(counts)} client statements, {len(errors)} errors", flush=True)
        self.assertEqual(errors, [])
        self.assertGreater(min(counts), 0)
        self.wait_fleet(3)

    def test_5_all_etcd_members_stopped(self):
        version = self.versions()[0]
        stop, errors, counts = threading.Event(), [], [0, 0, 0]
        threads = self.load(stop, errors, counts)
        try:
            self.etcd.stop()
            time.sleep(1)
            # Serving goes on with the map in force.
            self.assertEqual(self.versions(), [version] * 3)
            # Reloads are refused with the documented error; nothing changes.
            self.proxies[0].write_map(ap.map_text(version + 1, **V2))
            c = admin(self.proxies[0])
            with self.assertRaises(pymysql.err.OperationalError) as e:
                ap.rows(c, "RELOAD SHARD MAP")
            self.assertIn("fleet: the coordination store (etcd) is unreachable", e.exception.args[1])
            with self.assertRaises(pymysql.err.OperationalError) as e:
                ap.rows(c, "SHOW FLEET")
            self.assertIn("unreachable", e.exception.args[1])
            # A proxy cut off from etcd starts no schema change (another could change the table meanwhile).
            with self.assertRaises(pymysql.err.OperationalError) as e:
                ap.rows(c, f"ALTER TABLE {ap.TABLE} ADD INDEX it_fleet_cut_off (body)")
            self.assertEqual(e.exception.args[0], 9151, e.exception.args)
            self.assertIn("etcd", e.exception.args[1])
            with self.assertRaises(pymysql.err.OperationalError) as e:
                ap.rows(c, "SHOW SCHEMA CHANGES")
            self.assertIn("cannot read the fleet's schema changes", e.exception.args[1])
            c.close()
            self.assertNotIn("it_fleet_cut_off", self.indexes(ap.DB0_PORT, f"{ap.TABLE}_s01"))
            self.assertEqual(self.versions(), [version] * 3)
        finally:
            stop.set()
            for t in threads:
                t.join()
        print(f"\netcd down: {sum(counts)} client statements, {len(errors)} errors", flush=True)
        self.assertEqual(errors, [])
        self.assertGreater(min(counts), 0)
        # A proxy restarted during the outage serves the fleet's map from its
        # cache, not its own map file (which says something else).
        p3 = self.proxies[2]
        p3.stop()
        p3.write_map(ap.map_text(version + 7, **V2))
        p3.start()
        c = admin(p3)
        self.assertEqual(version_of(c), version)
        c.close()
        c = app(p3)
        self.assertEqual(ap.rows(c, f"SELECT COUNT(*) >= 0 FROM {ap.TABLE} WHERE peer_id = 1")[0][0], 1)
        c.close()
        # etcd comes back: every proxy re-registers, and reloads work again.
        restarted = time.monotonic()
        self.etcd.start()
        healthy = time.monotonic()
        self.wait_fleet(3, timeout=30)
        self.assertEqual(self.versions(), [version] * 3)
        self.proxies[0].write_map(ap.map_text(version + 1, **V2))
        row = self.reload_after_outage(self.proxies[0])
        self.assertEqual(row["result"], "applied")
        self.wait_versions(version + 1)
        # Includes the proxies' reconnect backoff (fleet.retry_max_ms): p3 started during the outage.
        print(f"etcd back: healthy {healthy - restarted:.1f} s after the restart; a RELOAD published and served "
              f"by all 3 proxies {time.monotonic() - healthy:.1f} s after that", flush=True)

    def test_6_quorum_lost(self):
        """Two members stopped: the one left has no leader; requests to it time out."""
        version = self.versions()[0]
        leader = self.etcd.leader()
        others = [n for n in self.etcd.names if n != leader]
        survivor = others[0]
        for n in self.etcd.names:
            if n != survivor:
                self.etcd.stop(n)
        try:
            time.sleep(1)
            self.assertEqual(self.versions(), [version] * 3)
            self.proxies[1].write_map(ap.map_text(version + 1, **V1))
            c = admin(self.proxies[1])
            started = time.monotonic()
            with self.assertRaises(pymysql.err.OperationalError) as e:
                ap.rows(c, "RELOAD SHARD MAP")
            refused_after = time.monotonic() - started
            c.close()
            self.assertIn("fleet: the coordination store (etcd) is unreachable", e.exception.args[1])
            self.assertIn("fleet.etcd.request_timeout_ms", e.exception.args[1])  # the survivor did not answer
            self.assertEqual(self.versions(), [version] * 3)
            print(f"\nquorum lost: RELOAD refused after {refused_after:.1f} s", flush=True)
        finally:
            for n in self.etcd.names:
                if n != survivor:
                    self.etcd.start(n)
        self.wait_fleet(3, timeout=30)
        row = self.reload_after_outage(self.proxies[1])
        self.assertEqual(row["result"], "applied")
        self.wait_versions(version + 1)

    # ---- schema changes across the fleet (issue 31) ----

    def schema_changes(self, proxy):
        c = admin(proxy)
        try:
            return ap.dict_rows(c, "SHOW SCHEMA CHANGES")
        finally:
            c.close()

    def wait_schema_change(self, proxy, pred, what, timeout=20):
        """The newest row of SHOW SCHEMA CHANGES on `proxy` that `pred` accepts, polled."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                last = self.schema_changes(proxy)
                match = [r for r in last if pred(r)]
                if match:
                    return match[-1]
            except pymysql.err.OperationalError as e:  # a proxy (re)starting
                last = e
            time.sleep(0.1)
        self.fail(f"{proxy.name}: no schema change {what}: {last}")

    def physical_names(self, port, table, sql):
        c = ap.direct(port)
        try:
            return {r[0] for r in ap.rows(c, sql.format(table))}
        finally:
            c.close()

    def indexes(self, port, table):
        return self.physical_names(port, table, "SELECT INDEX_NAME FROM information_schema.STATISTICS "
                                                "WHERE TABLE_SCHEMA = 'im' AND TABLE_NAME = '{}'")

    def columns(self, port, table):
        return self.physical_names(port, table, "SELECT COLUMN_NAME FROM information_schema.COLUMNS "
                                                "WHERE TABLE_SCHEMA = 'im' AND TABLE_NAME = '{}'")

    def test_7_one_schema_change_of_a_table_at_a_time_in_the_fleet(self):
        self.wait_fleet(3, timeout=30)
        # The first physical table waits for this lock: p1's change is running, holding the claim.
        lock = ap.direct(ap.DB0_PORT)
        ap.rows(lock, f"LOCK TABLES {ap.TABLE}_s01 WRITE")
        outcome = {}

        def change():
            c = admin(self.proxies[0])
            try:
                outcome["rows"] = ap.dict_rows(c, f"ALTER TABLE {ap.TABLE} ADD INDEX it_fleet_body (body)")
            except pymysql.err.MySQLError as e:
                outcome["error"] = e
            finally:
                c.close()

        worker = threading.Thread(target=change)
        worker.start()
        try:
            row = self.wait_schema_change(
                self.proxies[2], lambda r: r["proxy"] == "p1" and r["state"] == "running" and "it_fleet_body" in r["statement"],
                "of p1 running on p3's list")
            self.assertEqual(row["claimed"], "yes", row)
            c = admin(self.proxies[1])
            try:
                with self.assertRaises(pymysql.err.OperationalError) as e:
                    ap.rows(c, f"CREATE INDEX it_fleet_other ON {ap.TABLE} (msg_id)")
            finally:
                c.close()
            self.assertEqual(e.exception.args[0], 9151, e.exception.args)
            self.assertIn("runs on proxy p1", e.exception.args[1])
        finally:
            ap.rows(lock, "UNLOCK TABLES")
            lock.close()
            worker.join(60)
        self.assertNotIn("error", outcome)
        self.assertEqual(outcome["rows"][0]["state"], "done", outcome)
        self.assertEqual(outcome["rows"][0]["proxy"], "p1")
        change_id = outcome["rows"][0]["id"]
        self.assertIn("it_fleet_body", self.indexes(ap.DB0_PORT, f"{ap.TABLE}_s01"))
        self.assertIn("it_fleet_body", self.indexes(ap.DB1_PORT, f"{ap.TABLE}_s02"))
        # The fleet's record says done, the claim is gone: p2 changes the table at once.
        row = self.wait_schema_change(self.proxies[1], lambda r: r["proxy"] == "p1" and r["id"] == change_id
                                      and r["state"] == "done", f"{change_id} of p1 done on p2's list")
        self.assertEqual((row["claimed"], row["changed"], row["pending"]), ("no", "2", "0"), row)
        c = admin(self.proxies[1])
        try:
            done = ap.dict_rows(c, f"DROP INDEX it_fleet_body ON {ap.TABLE}")
            tables = ap.dict_rows(c, f"SHOW SCHEMA CHANGE {change_id} FROM PROXY p1")
        finally:
            c.close()
        self.assertEqual((done[0]["state"], done[0]["proxy"]), ("done", "p2"), done)
        self.assertEqual(sorted(t["table_name"] for t in tables), [f"{ap.TABLE}_s01", f"{ap.TABLE}_s02"])
        self.assertNotIn("it_fleet_body", self.indexes(ap.DB0_PORT, f"{ap.TABLE}_s01"))

    def test_8_a_killed_proxys_schema_change_adopted_by_another(self):
        self.wait_fleet(3, timeout=30)
        victim, adopter = self.proxies[0], self.proxies[1]
        # The second physical table waits: p1 changes the first one, then is killed.
        lock = ap.direct(ap.DB1_PORT)
        ap.rows(lock, f"LOCK TABLES {ap.TABLE}_s02 WRITE")

        def change():
            try:
                c = admin(victim)
                ap.rows(c, f"ALTER TABLE {ap.TABLE} ADD COLUMN it_fleet_col INT NULL")
            except Exception:
                pass  # its proxy is killed under it

        threading.Thread(target=change, daemon=True).start()
        unlocked = False
        try:
            row = self.wait_schema_change(adopter, lambda r: r["proxy"] == "p1" and "it_fleet_col" in r["statement"]
                                          and r["changed"] == "1", "of p1 half done on p2's list")
            change_id = row["id"]
            victim.proc.kill()
            victim.proc.wait()
            killed_at = time.monotonic()
            c = admin(adopter)
            try:
                with self.assertRaises(pymysql.err.OperationalError) as e:
                    ap.rows(c, f"RETRY SCHEMA CHANGE {change_id} FROM PROXY p1")
            finally:
                c.close()
            if time.monotonic() - killed_at < 1.5:  # well inside fleet.lease_ttl_s (3 s): p1's claim stands
                self.assertIn("proxy p1 runs schema change", e.exception.args[1])
            ap.rows(lock, "UNLOCK TABLES")
            unlocked = True
            # Once p1's lease expired, p2 adopts the change and finishes it.
            deadline = time.monotonic() + 20
            while True:
                c = admin(adopter)
                try:
                    adopted = ap.dict_rows(c, f"RETRY SCHEMA CHANGE {change_id} FROM PROXY p1")
                    break
                except pymysql.err.OperationalError as e:
                    self.assertIn("runs schema change", e.args[1])
                    self.assertLess(time.monotonic(), deadline, e)
                    time.sleep(0.2)
                finally:
                    c.close()
        finally:
            if not unlocked:
                ap.rows(lock, "UNLOCK TABLES")
            lock.close()
        row = adopted[0]
        self.assertEqual((row["state"], row["proxy"], row["pending"], row["failed"]), ("done", "p2", "0", "0"), row)
        self.assertIn(f"adopted from p1/{change_id}", row["message"])
        self.assertIn("it_fleet_col", self.columns(ap.DB0_PORT, f"{ap.TABLE}_s01"))
        self.assertIn("it_fleet_col", self.columns(ap.DB1_PORT, f"{ap.TABLE}_s02"))
        theirs = self.wait_schema_change(self.proxies[2], lambda r: r["proxy"] == "p1" and r["id"] == change_id
                                         and r["state"] == "adopted", f"{change_id} of p1 adopted on p3's list")
        self.assertEqual(theirs["adopted_by"], f"p2/{row['id']}")
        # p1, back, does not resume what p2 finished: its own record says adopted.
        victim.start()
        self.wait_fleet(3, timeout=30)
        mine = self.wait_schema_change(victim, lambda r: r["proxy"] == "p1" and r["id"] == change_id
                                       and r["state"] == "adopted", f"{change_id} adopted on p1's own list")
        self.assertIn(f"adopted by p2/{row['id']}", mine["message"])
        c = admin(adopter)
        try:
            ap.rows(c, f"ALTER TABLE {ap.TABLE} DROP COLUMN it_fleet_col")
        finally:
            c.close()
        self.assertNotIn("it_fleet_col", self.columns(ap.DB1_PORT, f"{ap.TABLE}_s02"))

    def limits_on(self, proxy):
        c = admin(proxy)
        try:
            return ap.dict_rows(c, "SHOW LIMITS")
        finally:
            c.close()

    def wait_limits(self, pred, what, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            lists = [self.limits_on(p) for p in self.proxies]
            if all(pred(rows) for rows in lists):
                return lists
            self.assertLess(time.monotonic(), deadline, f"{what}: {lists}")
            time.sleep(0.2)

    def test_9_a_statement_limit_shared_by_the_fleet(self):
        """SET LIMIT on one proxy reaches all, a restarted one too; each admits a third, the fleet the limit."""
        self.wait_fleet(3, timeout=30)
        rate = 60
        c = admin(self.proxies[0])
        try:
            ap.rows(c, f"SET LIMIT FOR DIGEST 'SELECT 1 + 1' max_per_second = {rate}")
        finally:
            c.close()
        # Every proxy has the rule (watched) and has counted the fleet (once per keepalive: lease_ttl_s / 3).
        lists = self.wait_limits(lambda rows: len(rows) == 1 and rows[0]["fleet_proxies"] == "3",
                                 "the digest limit set on p1, on every proxy")
        shares = [rows[0] for rows in lists]
        self.assertEqual({(r["kind"], r["max_per_second"]) for r in shares}, {("digest", str(rate))})
        self.assertEqual({r["share_per_second"] for r in shares}, {str(rate // 3)})
        # A proxy down while a limit is set reads it when it comes back.
        victim = self.proxies[2]
        victim.proc.kill()
        victim.proc.wait()
        c = admin(self.proxies[1])
        try:
            ap.rows(c, "SET LIMIT FOR USER app max_concurrent = 1000")
        finally:
            c.close()
        victim.start()
        self.wait_fleet(3, timeout=30)
        self.wait_limits(lambda rows: {r["kind"] for r in rows} == {"digest", "user"},
                         "both limits, the restarted p3 included")
        c = admin(self.proxies[2])
        try:
            ap.rows(c, "SET LIMIT FOR USER app")  # removed everywhere
        finally:
            c.close()
        self.wait_limits(lambda rows: [(r["kind"], r["fleet_proxies"]) for r in rows] == [("digest", "3")],
                         "the user limit removed on p3, everywhere; every proxy counts three")
        admitted, refused = [[], [], []], [0]
        stop = threading.Event()

        def hammer(i):
            conn = app(self.proxies[i % 3])
            try:
                while not stop.is_set():
                    try:
                        ap.rows(conn, "SELECT 1 + 1")
                        admitted[i % 3].append(time.monotonic())
                    except pymysql.err.OperationalError as e:
                        self.assertEqual(e.args[0], 9160, e.args)
                        self.assertIn("of a fleet of 3", e.args[1])
                        refused[0] += 1
            finally:
                conn.close()

        threads = [threading.Thread(target=hammer, args=(i,)) for i in range(6)]
        started = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(4)
        stop.set()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
        c = admin(self.proxies[1])
        try:
            ap.rows(c, "SET LIMIT FOR DIGEST 'SELECT 1 + 1'")
        finally:
            c.close()
        self.wait_limits(lambda rows: len(rows) == 0, "no limit left")
        ok = [len(a) for a in admitted]
        allowed = rate * elapsed + rate  # each proxy: a third of the rate, and a third of one second's burst
        self.assertGreater(refused[0], 0)
        self.assertLessEqual(sum(ok), allowed * 1.05, f"{ok} admitted, at most {allowed:.0f} allowed")
        for n in ok:
            self.assertLessEqual(n, allowed / 3 * 1.05, ok)
        # The steady rate, past the first second's burst: the limit within 5%, each proxy a third of it.
        window = (started + 1.0, started + 3.5)
        steady = [sum(1 for t in a if window[0] <= t < window[1]) for a in admitted]
        expected = rate * (window[1] - window[0])
        self.assertLessEqual(abs(sum(steady) - expected), expected * 0.05 + 1, f"{steady} in 2.5 s, expected {expected}")
        print(f"\nfleet statement limit {rate}/s over {elapsed:.2f} s on 3 proxies: {sum(ok)} admitted {ok} "
              f"({sum(ok) / allowed:.3f} of the allowance), {refused[0]} refused; steady rate "
              f"{sum(steady) / (window[1] - window[0]):.1f}/s {steady} (limit {rate}/s)", flush=True)

if __name__ == "__main__":
    unittest.main()
