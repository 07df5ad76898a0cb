"""Reads on replicas and read-your-writes against real GTID replication (issue 29).

A group of its own: scripts/cluster starts a primary and two replicas on
ports of this test (SP_REPLICA_PORT, +100, +200) in a directory of its own,
and this test starts its own proxy in front of them. Which server answered a
read is told by a table that is not replicated: `whoami` is created on each
server with sql_log_bin=0 and holds that server's name.

Checked:
- per user (`reads: replica`), per session (SET shardproxy_reads), per
  statement (the comment hint), and that transactions, locking reads,
  variables and autocommit=0 stay on the primary;
- read-your-writes: with the replicas applying events two seconds late
  (MASTER_DELAY), a session that writes reads its own write every time
  (0 stale reads), by waiting or on the primary; with their SQL threads
  stopped, replicas serve nobody once the monitor sees it;
- SHOW BACKENDS lists every server with its role, health and GTID position;
- a replica killed with SIGKILL stops getting reads, and reads keep working;
- with semi-synchronous AFTER_SYNC replication SHOW BACKENDS says a failover
  loses no acknowledged write, and says it can once semi-sync fell back.
Everything is torn down at the end, whatever failed.
"""
import os
import re
import signal
import subprocess
import sys
import time
import unittest

import pymysql

import replication_group
from free_ports import free_ports
from replication_group import root, rows, scalar, wait_until

HOST = "127.0.0.1"
REPO = os.environ["SP_REPO_ROOT"]
BINARY = os.environ["SP_PROXY_BINARY"]
RUN_DIR = os.environ["SP_REPLICA_RUN_DIR"]
PRIMARY = int(os.environ.get("SP_REPLICA_PORT", "3357"))
REPLICAS = [PRIMARY + 100, PRIMARY + 200]
NAMES = {PRIMARY: "primary", REPLICAS[0]: "r1", REPLICAS[1]: "r2"}
CLUSTER_DIR = os.path.join(RUN_DIR, "cluster")
CHECK_MS = 200
CAUSAL_MS = 100


def cluster(*args, timeout=240):
    return replication_group.cluster(REPO, CLUSTER_DIR, *args, timeout=timeout)


CONFIG = """\
server:
  listen: 127.0.0.1:{port}
  admin_listen: 127.0.0.1:{admin}
users:
  - {{name: app, password: app_pw, reads: replica}}
  - {{name: ops, password: ops_pw}}
admin_users:
  - {{name: admin, password: admin_pw}}
{backends}ha:
  check_interval_ms: {check}
  probe_timeout_ms: 1000
  max_replica_lag_ms: 10000
  causal_read_timeout_ms: {causal}
  failure_timeout_ms: 2000
"""


class ReplicaReads(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(RUN_DIR, exist_ok=True)
        cluster("up", "--ports", str(PRIMARY), "--replicas", "2")
        cls.started = True
        with root(PRIMARY) as p:
            for sql in ("DROP TABLE IF EXISTS im.rw", "CREATE TABLE im.rw (id INT PRIMARY KEY, v INT)"):
                rows(p, sql)
            gtid = scalar(p, "SELECT @@gtid_current_pos")
        for port in [PRIMARY] + REPLICAS:
            with root(port) as c:
                if port != PRIMARY:
                    # The replicas have the primary's tables before the test reads them.
                    r = scalar(c, "SELECT MASTER_GTID_WAIT(%s, 30)", (gtid,))
                    if r != 0:
                        raise SystemExit(f"replica {port} did not catch up with {gtid}")
                for sql in ("SET SESSION sql_log_bin = 0", "DROP TABLE IF EXISTS im.whoami",
                            "CREATE TABLE im.whoami (name VARCHAR(16))",
                            f"INSERT INTO im.whoami VALUES ('{NAMES[port]}')"):
                    rows(c, sql)
        cls.port, cls.admin = free_ports(2)
        config = os.path.join(RUN_DIR, "shardproxy.yaml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(CONFIG.format(port=cls.port, admin=cls.admin, check=CHECK_MS, causal=CAUSAL_MS,
                                  backends=replication_group.group_backends(PRIMARY, REPLICAS[0], REPLICAS[1], 16)))
        cls.log = open(os.path.join(RUN_DIR, "shardproxy.log"), "w")
        cls.proc = subprocess.Popen([BINARY, "--config", config], stdout=cls.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while True:
            try:
                cls.connect("ops").close()
                break
            except pymysql.err.MySQLError:
                if time.time() > deadline or cls.proc.poll() is not None:
                    raise SystemExit("the test proxy did not start; see " + cls.log.name)
                time.sleep(0.2)
        wait_until("both replicas up in SHOW BACKENDS",
                   lambda: all(cls.backend_row(n)["health"] == "up" for n in ("r1", "r2")))

    @classmethod
    def tearDownClass(cls):
        try:
            if getattr(cls, "proc", None):
                cls.proc.send_signal(signal.SIGTERM)
                cls.proc.wait(timeout=20)
                cls.log.close()
        finally:
            cluster("down", "--ports", ",".join(str(p) for p in [PRIMARY] + REPLICAS))

    @classmethod
    def connect(cls, user, **kw):
        return pymysql.connect(host=HOST, port=cls.port, user=user, password=f"{user}_pw", database="im",
                               autocommit=True, connect_timeout=10, read_timeout=60, **kw)

    @classmethod
    def backend_row(cls, name):
        with pymysql.connect(host=HOST, port=cls.admin, user="admin", password="admin_pw", connect_timeout=10) as a:
            with a.cursor(pymysql.cursors.DictCursor) as cur:
                cur.execute("SHOW BACKENDS")
                for row in cur.fetchall():
                    if row["backend"] == name:
                        return row
        raise AssertionError(f"SHOW BACKENDS has no row {name}")

    def who(self, conn, prefix=""):
        return scalar(conn, prefix + "SELECT name FROM whoami")

    def test_1_reads_go_where_user_session_and_hint_say(self):
        with self.connect("app") as app:
            seen = {self.who(app) for _ in range(20)}
            self.assertEqual(seen, {"r1", "r2"}, "a replica-reading user's plain reads take turns on the replicas")
            self.assertEqual(self.who(app, "/* shardproxy_reads=primary */ "), "primary")
            # What needs the primary's connection or locks stays there.
            for sql in ("SELECT name FROM whoami FOR UPDATE", "SELECT name FROM whoami LOCK IN SHARE MODE",
                        "SELECT name FROM whoami WHERE @@autocommit = 1"):
                self.assertEqual(scalar(app, sql), "primary", sql)
            rows(app, "BEGIN")
            self.assertEqual(self.who(app), "primary", "inside a transaction")
            rows(app, "COMMIT")
            rows(app, "SET autocommit = 0")
            self.assertEqual(self.who(app), "primary", "autocommit=0 opens a transaction")
            rows(app, "COMMIT")
            rows(app, "SET autocommit = 1")
            self.assertIn(self.who(app), ("r1", "r2"))
        with self.connect("ops") as ops:
            self.assertEqual(self.who(ops), "primary", "users read the primary by default")
            self.assertIn(self.who(ops, "/* shardproxy_reads=replica */ "), ("r1", "r2"))
            rows(ops, "SET @@session.shardproxy_reads = 'replica'")
            self.assertIn(self.who(ops), ("r1", "r2"))
            rows(ops, "SET shardproxy_reads = primary")
            self.assertEqual(self.who(ops), "primary")
            rows(ops, "SET SESSION shardproxy_reads = DEFAULT")
            self.assertEqual(self.who(ops), "primary")
            with self.assertRaises(pymysql.err.MySQLError) as bad:
                rows(ops, "SET shardproxy_reads = 'replicas'")
            self.assertEqual(bad.exception.args[0], 1231)
            with self.assertRaises(pymysql.err.MySQLError) as mixed:
                rows(ops, "SET shardproxy_reads = 'replica', sql_mode = ''")
            self.assertEqual(mixed.exception.args[0], 1235)
            rows(ops, "SET shardproxy_reads = 'replica'")
            ops.ping(reconnect=False)
            ops._execute_command(0x1F, b"")  # COM_RESET_CONNECTION (pymysql names no constant for it)
            ops._read_ok_packet()
            self.assertEqual(self.who(ops), "primary", "COM_RESET_CONNECTION restores the user's default")
        row = self.backend_row("r1")
        self.assertEqual(row["role"], "replica")
        self.assertEqual(row["group"], "db0")
        self.assertGreater(int(row["replica_reads"]), 0)
        self.assertEqual(row["replicates_from"], f"127.0.0.1:{PRIMARY}")
        primary = self.backend_row("db0")
        self.assertEqual(primary["role"], "primary")
        self.assertEqual(primary["health"], "up")
        self.assertEqual(primary["read_only"], "0")
        self.assertEqual(primary["failover_loss"], "possible: asynchronous replication")

    def test_2_a_session_reads_its_own_writes(self):
        # Healthy replicas: each write is read back at once through a replica
        # read; the proxy waits for the GTID or asks the primary.
        stale = 0
        tries = 300
        replica_reads = lambda: sum(int(self.backend_row(n)["replica_reads"]) for n in ("r1", "r2"))
        before = replica_reads()
        with self.connect("app") as app:
            for i in range(tries):
                rows(app, "REPLACE INTO rw VALUES (1, %s)", (i,))
                if scalar(app, "SELECT v FROM rw WHERE id = 1") != i:
                    stale += 1
        served = replica_reads() - before
        print(f"read-your-writes: {tries} write+read pairs, {served} reads answered by a replica, {stale} stale",
              file=sys.stderr)
        self.assertEqual(stale, 0, f"{stale} of {tries} reads missed the session's own write")
        self.assertGreater(served, 0, "replicas answered none of the reads right after writes: nothing was checked")
        # Replicas applying two seconds late: still never stale for the writer,
        # while a session that did not write reads the replicas' older rows.
        for port in REPLICAS:
            with root(port) as c:
                for sql in ("STOP SLAVE", "CHANGE MASTER TO MASTER_DELAY = 2", "START SLAVE"):
                    rows(c, sql)
        try:
            stale = 0
            reader_saw_old = False
            with self.connect("app") as writer, self.connect("app") as reader:
                for i in range(40):
                    rows(writer, "REPLACE INTO rw VALUES (2, %s)", (1000 + i,))
                    if scalar(writer, "SELECT v FROM rw WHERE id = 2") != 1000 + i:
                        stale += 1
                    if scalar(reader, "SELECT v FROM rw WHERE id = 2") != 1000 + i:
                        reader_saw_old = True
            self.assertEqual(stale, 0, "the writer read older data than it wrote")
            self.assertTrue(reader_saw_old, "the delayed replicas served the other session (the check means something)")
        finally:
            for port in REPLICAS:
                with root(port) as c:
                    for sql in ("STOP SLAVE", "CHANGE MASTER TO MASTER_DELAY = 0", "START SLAVE"):
                        rows(c, sql)

    def test_3_broken_replication_serves_nobody(self):
        for port in REPLICAS:
            with root(port) as c:
                rows(c, "STOP SLAVE SQL_THREAD")
        try:
            wait_until("both replicas broken_replication",
                       lambda: all(self.backend_row(n)["health"] == "broken_replication" for n in ("r1", "r2")))
            with self.connect("app") as app:
                self.assertEqual({self.who(app) for _ in range(10)}, {"primary"})
        finally:
            for port in REPLICAS:
                with root(port) as c:
                    rows(c, "START SLAVE SQL_THREAD")
        wait_until("replicas up again", lambda: all(self.backend_row(n)["health"] == "up" for n in ("r1", "r2")))

    def test_4_a_killed_replica_gets_no_more_reads(self):
        cluster("kill", str(REPLICAS[1]))
        try:
            wait_until("r2 not serving", lambda: self.backend_row("r2")["health"] in ("down",) or
                       self.backend_row("r2")["last_error"] is not None)
            time.sleep(2 * CHECK_MS / 1000)
            with self.connect("app") as app:
                self.assertEqual({self.who(app) for _ in range(20)}, {"r1"})
        finally:
            cluster("up", "--ports", str(PRIMARY), "--replicas", "2")
        wait_until("r2 back", lambda: self.backend_row("r2")["health"] == "up", timeout=60)


class SemiSync(unittest.TestCase):
    """SHOW BACKENDS says when a failover can lose acknowledged writes."""
    PORT = PRIMARY + 10  # its own group: 3367 and its replica 3467

    @classmethod
    def setUpClass(cls):
        cls.dir = os.path.join(RUN_DIR, "semi-sync")
        cls.cluster = lambda *a: replication_group.cluster(REPO, cls.dir, *a)
        cls.cluster("up", "--ports", str(cls.PORT), "--replicas", "1", "--semi-sync")
        cls.port, cls.admin = free_ports(2)
        config = os.path.join(RUN_DIR, "semi-sync.yaml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(CONFIG.format(port=cls.port, admin=cls.admin, check=CHECK_MS, causal=CAUSAL_MS,
                                  backends=replication_group.group_backends(cls.PORT, cls.PORT + 100, cls.PORT + 100, 16))
                    .replace(f"      - {{name: r2, address: 127.0.0.1:{cls.PORT + 100}}}\n", ""))
        cls.log = open(os.path.join(RUN_DIR, "semi-sync.log"), "w")
        cls.proc = subprocess.Popen([BINARY, "--config", config], stdout=cls.log, stderr=subprocess.STDOUT)

    @classmethod
    def tearDownClass(cls):
        try:
            cls.proc.send_signal(signal.SIGTERM)
            cls.proc.wait(timeout=20)
            cls.log.close()
        finally:
            cls.cluster("down", "--ports", str(cls.PORT))

    def loss(self):
        try:
            with pymysql.connect(host=HOST, port=self.admin, user="admin", password="admin_pw",
                                 connect_timeout=5) as a:
                with a.cursor(pymysql.cursors.DictCursor) as cur:
                    cur.execute("SHOW BACKENDS")
                    return {r["backend"]: r["failover_loss"] for r in cur.fetchall()}.get("db0")
        except pymysql.err.MySQLError:
            return None

    def test_semi_sync_after_sync_loses_nothing_until_it_falls_back(self):
        wait_until("semi-sync reported", lambda: self.loss() == "none: semi-sync AFTER_SYNC")
        with root(self.PORT + 100) as r:
            rows(r, "STOP SLAVE")
        try:
            with root(self.PORT) as p:
                # No replica acknowledges: the commit waits rpl_semi_sync_master_timeout (10 s), then semi-sync is off.
                # A new row every run: a commit that writes nothing to the binary
                # log (the table already there from an earlier run) waits for no one.
                rows(p, "CREATE TABLE IF NOT EXISTS im.semi_writes (id INT AUTO_INCREMENT PRIMARY KEY)")
                rows(p, "INSERT INTO im.semi_writes VALUES (NULL)")
            wait_until("the fallback reported", lambda: (self.loss() or "").startswith("possible: semi-sync fell back"))
        finally:
            with root(self.PORT + 100) as r:
                rows(r, "START SLAVE")


if __name__ == "__main__":
    unittest.main(verbosity=2)
