"""Cross-backend transactions in a fleet (issue 35): the proxy that decided dies, another finishes its work.

Run by ctest as integration.xa_fleet (tests/integration/fleet.cmake), or by hand:
  cd tests/integration && SP_PROXY_BINARY=../../build/proxy/shardproxy /usr/bin/python3 -m unittest -v xa_fleet_test

A real 3-member etcd cluster (scripts/fleet) and two proxies, p1 and p2
(fleet.lease_ttl_s: 2, transactions.recovery_interval_ms: 300), over the
shared MariaDB cluster; the accounts table of xa_transactions_test (account a
on db0 when a % 16 < 8, else on db1), so a transfer between accounts 0 and 8
needs both backends. Balances are read on the backends directly.

test_1: transfers across backends through both proxies at once: every one
committed, total unchanged, no branch left prepared, no decision record left
in etcd (<prefix>/xa/decisions/, read through the JSON gateway).
test_2: while p2 keeps transferring across backends (accounts other than 0
and 8), p1 runs with SHARDPROXY_XA_FAILPOINT=after_decision: it writes the
commit decision to etcd (the record is there: commit, p1, [db0, db1]), then
_exits (as a SIGKILL: no lease revoked) before any XA COMMIT. While p1's lease lives, p2 lists both branches in doubt
("waiting for proxy p1 (alive)") and leaves them; once it expired, p2 commits
both: the transfer is applied on both backends, total unchanged, XA RECOVER
empty on both, every account equals what the confirmed transfers say, SHOW
TRANSACTIONS on p2 shows the two recovered branches, and the record is deleted.
test_3: the same with after_prepares (both branches prepared, no decision):
p2 rolls both back (it first settles the id in etcd so that no late commit
decision can appear); balances unchanged.
test_4: every etcd member stopped: a transfer across backends through p2
gets 9170 at COMMIT and changes nothing (no branch left prepared), while a
transfer on one backend (one phase, no decision) commits; etcd restarted.
The time from p1's death to the last branch finished is printed (figures:
lease TTL 2 s + up to one recovery interval + the pass).
"""
import base64
import json
import os
import random
import shutil
import threading
import time
import unittest
import urllib.request

import pymysql

import fleet_test as ft
import scatter_failure_proxy as sf
import xa_transactions_test as xt

PREFIX = "itxf"
LEASE_TTL_S = 2
RECOVERY_MS = 300
AMOUNT = 7


def prepared(port):
    conn = sf.direct(port)
    try:
        return [r[3].decode(errors="replace") for r in sf.rows(conn, "XA RECOVER")
                if r[3].decode(errors="replace").startswith(PREFIX + "-")]
    finally:
        conn.close()


def all_prepared():
    return prepared(sf.DB0_PORT) + prepared(sf.DB1_PORT)


def p1_prepared():
    """p1's branches only: p2's own commits (test_2 keeps it transferring) prepare branches too."""
    return [x for x in all_prepared() if x.startswith(f"{PREFIX}-p1-")]


def etcd_range(endpoint, prefix):
    """{key: value} of every key under `prefix`, through etcd's JSON gateway."""
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    body = json.dumps({"key": base64.b64encode(prefix.encode()).decode(),
                       "range_end": base64.b64encode(end.encode()).decode()}).encode()
    with urllib.request.urlopen(urllib.request.Request(endpoint + "/v3/kv/range", data=body), timeout=5) as r:
        kvs = json.load(r).get("kvs", [])
    return {base64.b64decode(kv["key"]).decode(): json.loads(base64.b64decode(kv.get("value", "")) or b"null")
            for kv in kvs}


class XaFleetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(ft.RUN_ROOT, exist_ok=True)
        cls.table = xt.Accounts("it_xaf_acct")
        xt.TABLE = cls.table.name
        cls.etcd = ft.fleet.EtcdCluster(ft.RUN_ROOT, ft.ETCD_PORTS, ft.PEER_PORTS, token=f"itxf-{os.getpid()}")
        cls.etcd.destroy()
        cls.proxies = []
        try:
            cls.table.create()
            cls.etcd.start(fresh=True)
            binary = os.environ.get("SP_PROXY_BINARY", os.path.join(ft.REPO_ROOT, "build", "proxy", "shardproxy"))
            base = os.path.join(ft.REPO_ROOT, "conf", "shardproxy.yaml")
            for name, port in zip(ft.fleet.NAMES[:2], ft.proxy_ports()):
                p = ft.fleet.FleetProxy(ft.RUN_ROOT, name, port, binary)
                shutil.rmtree(os.path.join(p.dir, "cache"), ignore_errors=True)
                cls.prefix = f"/shardproxy/itxf-{os.getpid()}"
                config = ft.fleet.proxy_config(base, name, port, port + 1, p.dir, cls.etcd.endpoints(),
                                               cls.prefix, [sf.DB0_PORT, sf.DB1_PORT])
                config["fleet"]["lease_ttl_s"] = LEASE_TTL_S
                config["transactions"] = {"cross_backend": "atomic", "recovery_interval_ms": RECOVERY_MS,
                                          "xid_prefix": PREFIX}
                p.write_config(config)
                p.write_map(cls.table.map_text())
                p.start()
                cls.proxies.append(p)
            cls.p1, cls.p2 = cls.proxies
            cls.wait_fleet(2)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        os.environ.pop("SHARDPROXY_XA_FAILPOINT", None)
        for p in getattr(cls, "proxies", []):
            p.stop()
        cls.etcd.destroy()
        # Nothing of this run may stay prepared on the shared backends (a failed test's branches).
        for port in (sf.DB0_PORT, sf.DB1_PORT):
            conn = sf.direct(port)
            try:
                for fmt, glen, blen, data in sf.rows(conn, "XA RECOVER"):
                    if data.decode(errors="replace").startswith(PREFIX + "-"):
                        g, b = data[:glen].decode(), data[glen:glen + blen].decode()
                        sf.rows(conn, f"XA ROLLBACK '{g}','{b}'")
            finally:
                conn.close()
        cls.table.drop()

    wait_fleet = ft.FleetTest.__dict__["wait_fleet"]

    def setUp(self):
        for p in self.proxies:
            if not p.alive():
                os.environ.pop("SHARDPROXY_XA_FAILPOINT", None)
                p.start()
        self.wait_fleet(2)
        self.table.reset()

    def decisions(self):
        """The decision records in etcd, by gtrid."""
        root = self.prefix + "/xa/decisions/"
        return {k[len(root):]: v for k, v in etcd_range(self.etcd.endpoints()[0], root).items()}

    def wait_no_decisions(self, timeout=5):
        """Records are deleted once no backend lists a branch of their id (by a recovery pass)."""
        deadline = time.monotonic() + timeout
        while self.decisions():
            if time.monotonic() > deadline:
                self.fail(f"decision records left in etcd: {self.decisions()}")
            time.sleep(0.1)

    def show_transactions(self, proxy):
        c = ft.admin(proxy)
        try:
            return [r for r in sf.rows(c, "SHOW TRANSACTIONS") if r[0].startswith(PREFIX + "-")]
        finally:
            c.close()

    def test_1_transfers_across_backends_through_two_proxies(self):
        conns = [ft.app(p) for p in self.proxies]
        try:
            for i in range(20):
                src, dst = (0, 8) if i % 2 == 0 else (9, 1)
                xt.transfer(conns[i % 2], src, dst, AMOUNT)
        finally:
            for c in conns:
                c.close()
        b = self.table.balances()
        self.assertEqual(sum(b.values()), xt.ACCOUNTS * xt.INITIAL)
        self.assertEqual((b[0], b[8], b[9], b[1]),
                         (xt.INITIAL - 10 * AMOUNT, xt.INITIAL + 10 * AMOUNT,
                          xt.INITIAL - 10 * AMOUNT, xt.INITIAL + 10 * AMOUNT))
        self.assertEqual(all_prepared(), [])
        self.wait_no_decisions()  # each commit deleted its own record

    def kill_p1_at(self, step):
        """p1 restarted with the fail point; one transfer 0 -> 8 through it; p1 dies at `step`."""
        self.p1.stop()
        os.environ["SHARDPROXY_XA_FAILPOINT"] = step
        try:
            self.p1.start()
        finally:
            os.environ.pop("SHARDPROXY_XA_FAILPOINT", None)
        self.wait_fleet(2)
        conn = ft.app(self.p1)
        with self.assertRaises(pymysql.err.OperationalError):
            xt.transfer(conn, 0, 8, AMOUNT)
        died = time.monotonic()
        self.p1.proc.wait(10)
        self.assertEqual(self.p1.proc.returncode, 86, "p1 exited at the fail point")
        left = p1_prepared()
        self.assertEqual(len(left), 2, left)
        self.gtrid = left[0][:-3]  # gtrid + bqual ('db0' / 'db1')
        return died

    def wait_resolved(self, died, timeout=30):
        """Until no branch of the run is prepared; p2's in-doubt rows seen meanwhile."""
        waiting = set()
        deadline = time.monotonic() + timeout
        while p1_prepared():
            if time.monotonic() > deadline:
                self.fail(f"p1's branches still prepared {timeout}s after p1 died: {p1_prepared()}")
            for r in self.show_transactions(self.p2):
                if r[1] == "in_doubt":
                    waiting.add(r[7])
            time.sleep(0.05)
        took = time.monotonic() - died
        print(f"\n  p2 finished p1's branches {took:.2f}s after p1 died "
              f"(lease_ttl_s {LEASE_TTL_S}, recovery_interval_ms {RECOVERY_MS}); seen meanwhile: {sorted(waiting)}")
        self.assertLess(took, LEASE_TTL_S + 10)
        return waiting

    def transfers_on_p2(self, stop, done, errors):
        """Transfers across backends through p2 until `stop`, among accounts other than 0 and 8 (whose rows
        p1's prepared branches lock until p2 finishes them)."""
        rng = random.Random(7)
        conn = ft.app(self.p2)
        try:
            while not stop.is_set():
                src, dst = xt.cross_pair(rng)
                if {src, dst} & {0, 8}:
                    continue
                try:
                    xt.transfer(conn, src, dst, 1)
                    done.append((src, dst))
                except pymysql.MySQLError as e:
                    errors.append(e)
                    return
        finally:
            conn.close()

    def recovered_rows(self):
        return [r for r in self.show_transactions(self.p2) if r[1] == "recovered" and f"{PREFIX}-p1-" in r[0]]

    def test_2_decided_then_killed_committed_by_the_survivor(self):
        before = len(self.recovered_rows())
        stop, done, errors = threading.Event(), [], []
        worker = threading.Thread(target=self.transfers_on_p2, args=(stop, done, errors), daemon=True)
        worker.start()  # p2 keeps committing across backends while p1 dies and its branches wait
        try:
            died = self.kill_p1_at("after_decision")
            record = self.decisions().get(self.gtrid)
            self.assertEqual((record or {}).get("outcome"), "commit", self.decisions())
            self.assertEqual((record["proxy"], sorted(record["branches"])), ("p1", ["db0", "db1"]))
            waiting = self.wait_resolved(died)
        finally:
            stop.set()
            worker.join(30)
        self.assertEqual(errors, [])
        self.assertGreater(len(done), 0)
        self.assertIn("waiting for proxy p1 (alive)", waiting, "p2 leaves a live member's branches alone")
        b = self.table.balances()
        self.assertEqual((b[0], b[8]), (xt.INITIAL - AMOUNT, xt.INITIAL + AMOUNT), "the decided transfer committed")
        self.assertEqual(sum(b.values()), xt.ACCOUNTS * xt.INITIAL, "the total of every account, after p2's "
                         f"{len(done)} transfers and p1's death")
        expected = {a: xt.INITIAL for a in range(xt.ACCOUNTS)}
        expected[0], expected[8] = xt.INITIAL - AMOUNT, xt.INITIAL + AMOUNT
        for src, dst in done:
            expected[src] -= 1
            expected[dst] += 1
        self.assertEqual(b, expected, "every confirmed transfer applied on both backends")
        self.assertEqual(all_prepared(), [])
        rows = self.recovered_rows()[before:]
        self.assertEqual(sorted((r[4], r[6], r[7]) for r in rows),
                         [("db0", "commit", "for proxy p1 (gone)"), ("db1", "commit", "for proxy p1 (gone)")], rows)
        self.wait_no_decisions()

    def test_3_prepared_then_killed_rolled_back_by_the_survivor(self):
        before = len(self.recovered_rows())
        died = self.kill_p1_at("after_prepares")
        self.assertNotIn(self.gtrid, self.decisions())
        self.wait_resolved(died)
        b = self.table.balances()
        self.assertEqual((b[0], b[8]), (xt.INITIAL, xt.INITIAL), "the undecided transfer rolled back")
        self.assertEqual(sum(b.values()), xt.ACCOUNTS * xt.INITIAL)
        self.assertEqual(all_prepared(), [])
        rows = self.recovered_rows()[before:]
        self.assertEqual(sorted((r[4], r[6], r[7]) for r in rows),
                         [("db0", "rollback", "for proxy p1 (gone)"), ("db1", "rollback", "for proxy p1 (gone)")], rows)
        self.wait_no_decisions()  # the rollback record p2 settled the id with, cleaned up too
        # p1 restarted under its name takes part again: its next transfer commits.
        self.p1.start()
        self.wait_fleet(2)
        conn = ft.app(self.p1)
        try:
            xt.transfer(conn, 0, 8, AMOUNT)
        finally:
            conn.close()
        b = self.table.balances()
        self.assertEqual((b[0], b[8]), (xt.INITIAL - AMOUNT, xt.INITIAL + AMOUNT))

    def test_4_etcd_unreachable_rolls_back_with_9170(self):
        """No decision can be written: the two-phase commit rolls back, the client is told, nothing is
        committed; one-backend transactions (one phase, no decision) go on."""
        self.etcd.stop()
        try:
            conn = ft.app(self.p2)
            try:
                with conn.cursor() as cur:
                    cur.execute("BEGIN")
                    cur.execute(f"UPDATE {xt.TABLE} SET balance = balance - {AMOUNT} WHERE conv_id = 0")
                    cur.execute(f"UPDATE {xt.TABLE} SET balance = balance + {AMOUNT} WHERE conv_id = 8")
                    with self.assertRaises(pymysql.err.OperationalError) as refused:
                        cur.execute("COMMIT")
                self.assertEqual(refused.exception.args[0], 9170, refused.exception.args)
                xt.transfer(conn, 1, 2, AMOUNT)  # both on db0: one phase
            finally:
                conn.close()
            b = self.table.balances()
            self.assertEqual((b[0], b[8], b[1], b[2]), (xt.INITIAL, xt.INITIAL, xt.INITIAL - AMOUNT, xt.INITIAL + AMOUNT))
            self.assertEqual(all_prepared(), [])
        finally:
            self.etcd.start()
        self.wait_fleet(2, timeout=30)


if __name__ == "__main__":
    unittest.main()
