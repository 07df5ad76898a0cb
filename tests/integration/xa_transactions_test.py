"""Transactions across backends (issue 35): transactions.cross_backend: atomic.

A proxy of its own (helpers of scatter_failure_proxy.py) in front of the shared
test cluster. Accounts live in a sharded table of the run (conv_id = account,
16 shards: 0-7 on db0, 8-15 on db1), so a transfer between account 0 (db0) and
account 8 (db1) needs both backends. Outcomes are read on the backends
directly (never through the proxy):
- a transfer across backends commits on both, ROLLBACK leaves both as they
  were; the client sees one ordinary transaction (SERVER_STATUS_IN_TRANS);
  prepared statements (COM_STMT_EXECUTE) follow the same rules; SHOW
  TRANSACTIONS lists the open global transaction with 2 branches;
- savepoints across branches are refused (9171); a deadlock on one backend
  rolls the whole global transaction back (the other backend's row is free);
- concurrent transfers keep the total; figures (commit latency of one- and
  two-backend transactions, transfers/s) printed;
- crash injection: SHARDPROXY_XA_FAILPOINT makes the proxy _exit at each step
  of the commit (after the first XA PREPARE, after every prepare, after the
  decision, between the XA COMMITs) while 4 clients transfer; after each
  restart XA RECOVER shows none of the proxy's branches within seconds and
  every transfer is all-or-nothing (balances explained by the confirmed
  transfers plus a whole subset of the unconfirmed ones). Rounds per step:
  SP_XA_CRASH_ROUNDS (default 2);
- a participant (db1's mariadbd) SIGKILLed after the decision, before its
  XA COMMIT: the client gets OK, and recovery commits db1's prepared branch
  once scripts/cluster restarted it.
"""
import itertools
import os
import random
import struct
import subprocess
import threading
import time
import unittest

import pymysql
import pymysql.constants

import scatter_failure_proxy as sf

PREFIX = "itxa"
ACCOUNTS = 32
INITIAL = 1000
ROUNDS = int(os.environ.get("SP_XA_CRASH_ROUNDS", "2"))
STEPS = ["after_first_prepare", "after_prepares", "after_decision", "between_commits"]
SECTIONS = (f"transactions:\n  cross_backend: atomic\n  recovery_interval_ms: 200\n  xid_prefix: {PREFIX}\n")


def port_of(account):
    return sf.backend_port(account % sf.SHARDS)


class Accounts(sf.ShardedTable):
    def create(self):
        for port in (sf.DB0_PORT, sf.DB1_PORT):
            conn = sf.direct(port)
            try:
                for shard in range(sf.SHARDS):
                    if sf.backend_port(shard) == port:
                        sf.rows(conn, f"CREATE TABLE {self.physical(shard)} (conv_id BIGINT UNSIGNED PRIMARY KEY, "
                                      f"balance BIGINT NOT NULL) ENGINE=InnoDB")
            finally:
                conn.close()

    def reset(self):
        for port in (sf.DB0_PORT, sf.DB1_PORT):
            conn = sf.direct(port)
            try:
                for shard in range(sf.SHARDS):
                    if sf.backend_port(shard) == port:
                        sf.rows(conn, f"DELETE FROM {self.physical(shard)}")
                for a in range(ACCOUNTS):
                    if port_of(a) == port:
                        sf.rows(conn, f"INSERT INTO {self.physical(a % sf.SHARDS)} VALUES ({a}, {INITIAL})")
            finally:
                conn.close()

    def balances_on(self, port):
        conn = sf.direct(port)
        try:
            out = {}
            for shard in range(sf.SHARDS):
                if sf.backend_port(shard) == port:
                    out.update(dict(sf.rows(conn, f"SELECT conv_id, balance FROM {self.physical(shard)}")))
            return out
        finally:
            conn.close()

    def balances(self):
        out = {}
        for port in (sf.DB0_PORT, sf.DB1_PORT):
            conn = sf.direct(port)
            try:
                for shard in range(sf.SHARDS):
                    if sf.backend_port(shard) == port:
                        out.update(dict(sf.rows(conn, f"SELECT conv_id, balance FROM {self.physical(shard)}")))
            finally:
                conn.close()
        return out


def own_prepared(port):
    conn = sf.direct(port)
    try:
        return [r for r in sf.rows(conn, "XA RECOVER") if r[3].decode(errors="replace").startswith(PREFIX + "-")]
    finally:
        conn.close()


def wait_recovered(test, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        left = own_prepared(sf.DB0_PORT) + own_prepared(sf.DB1_PORT)
        if not left:
            return time.monotonic()
        if time.monotonic() > deadline:
            test.fail(f"XA RECOVER still lists the proxy's branches after {timeout}s: {left}")
        time.sleep(0.05)


def transfer(conn, src, dst, amount):
    """Both rows in account order: a lock cycle across two backends is a deadlock neither server sees
    (it ends only at innodb_lock_wait_timeout), so applications order their writes, as here."""
    with conn.cursor() as cur:
        cur.execute("BEGIN")
        for account, delta in sorted(((src, -amount), (dst, amount))):
            cur.execute(f"UPDATE {TABLE} SET balance = balance + {delta} WHERE conv_id = {account}")
        cur.execute("COMMIT")


def cross_pair(rng):
    src = rng.randrange(ACCOUNTS)
    while True:
        dst = rng.randrange(ACCOUNTS)
        if port_of(dst) != port_of(src):
            return src, dst


def prepared_write(conn, sql):
    """COM_STMT_PREPARE + COM_STMT_EXECUTE of a statement without parameters or rows."""
    conn._execute_command(0x16, sql)
    ok = conn._read_packet().get_all_data()
    stmt_id, columns, params = struct.unpack("<IHH", ok[1:9])
    for count in (params, columns):
        for _ in range(count + 1 if count else 0):
            conn._read_packet()
    conn._execute_command(0x17, struct.pack("<IBI", stmt_id, 0, 1))
    packet = conn._read_packet()
    return struct.unpack("<H", packet.get_all_data()[-4:-2])[0] if packet.is_ok_packet() else None


TABLE = None


def begin_transfer(cur, source, target, amount):
    """BEGIN and move `amount` between two accounts, leaving the transaction open."""
    cur.execute("BEGIN")
    cur.execute(f"UPDATE {TABLE} SET balance = balance - {amount} WHERE conv_id = {source}")
    cur.execute(f"UPDATE {TABLE} SET balance = balance + {amount} WHERE conv_id = {target}")


class XaTransactionsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        global TABLE
        cls.table = Accounts("it_xa_acct")
        TABLE = cls.table.name
        cls.table.create()
        cls.run_ = sf.ProxyRun("xa_transactions", cls.table, {"multi_shard_writes": "refuse"}, sections=SECTIONS)
        cls.run_.start()

    @classmethod
    def tearDownClass(cls):
        if not cls.run_.alive():
            os.environ.pop("SHARDPROXY_XA_FAILPOINT", None)
            cls.run_.start()  # its recovery resolves whatever a failed test left prepared
            time.sleep(1)
        cls.run_.stop()
        cls.table.drop()

    def setUp(self):
        if not self.run_.alive():
            os.environ.pop("SHARDPROXY_XA_FAILPOINT", None)
            self.run_.start()
        self.table.reset()

    def admin_rows(self, sql):
        a = pymysql.connect(host=sf.HOST, port=self.run_.admin_port, user="admin", password="admin_pw")
        try:
            return sf.rows(a, sql)
        finally:
            a.close()

    def test_0_recovery_passes_say_goodbye_to_the_backends(self):
        # Each recovery pass (every 200 ms here) opens a connection to every
        # backend and closes it. Closed without COM_QUIT, the server counts it
        # in Aborted_clients and logs "Aborted connection" for it: a warning
        # every pass, per backend, forever.
        def status(port):
            conn = sf.direct(port)
            try:
                return {k: int(v) for k, v in sf.rows(conn, "SHOW GLOBAL STATUS WHERE Variable_name IN "
                                                              "('Aborted_clients', 'Connections')")}
            finally:
                conn.close()
        before = {port: status(port) for port in (sf.DB0_PORT, sf.DB1_PORT)}
        time.sleep(2.0)
        for port in (sf.DB0_PORT, sf.DB1_PORT):
            after = status(port)
            # Our own status connection counts once; the passes at least 5 times more.
            self.assertGreaterEqual(after["Connections"] - before[port]["Connections"], 6,
                                    f"port {port}: recovery passes did not connect: {before[port]} -> {after}")
            self.assertEqual(after["Aborted_clients"], before[port]["Aborted_clients"],
                             f"port {port}: connections closed without COM_QUIT: {before[port]} -> {after}")

    def test_1_transfer_across_backends_commits_on_both(self):
        c = self.run_.connect()
        with c.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute(f"UPDATE {TABLE} SET balance = balance - 100 WHERE conv_id = 0")
            self.assertTrue(c.server_status & 1)  # SERVER_STATUS_IN_TRANS
            cur.execute(f"UPDATE {TABLE} SET balance = balance + 100 WHERE conv_id = 8")
            self.assertTrue(c.server_status & 1)
            cur.execute(f"SELECT balance FROM {TABLE} WHERE conv_id = 8")
            self.assertEqual(cur.fetchall()[0][0], INITIAL + 100)  # its own write, on db1's branch
            open_rows = [r for r in self.admin_rows("SHOW TRANSACTIONS") if r[0].startswith(PREFIX + "-")]
            self.assertEqual(len(open_rows), 1, open_rows)
            self.assertEqual((open_rows[0][1], open_rows[0][3]), ("active", "2"))
            self.assertEqual(self.table.balances()[0], INITIAL)  # not committed yet
            cur.execute("COMMIT")
            self.assertFalse(c.server_status & 1)
        b = self.table.balances()
        self.assertEqual((b[0], b[8]), (INITIAL - 100, INITIAL + 100))
        self.assertEqual(own_prepared(sf.DB0_PORT) + own_prepared(sf.DB1_PORT), [])
        self.assertEqual([r for r in self.admin_rows("SHOW TRANSACTIONS")
                          if r[0].startswith(PREFIX) and r[1] != "recovered"], [])
        # The next transaction of the session starts clean, on one backend: one phase.
        transfer(c, 1, 2, 5)
        b = self.table.balances()
        self.assertEqual((b[1], b[2]), (INITIAL - 5, INITIAL + 5))
        c.close()

    def test_2_rollback_leaves_both_backends_unchanged(self):
        c = self.run_.connect()
        with c.cursor() as cur:
            cur.execute("START TRANSACTION")
            cur.execute(f"UPDATE {TABLE} SET balance = 0 WHERE conv_id = 3")
            cur.execute(f"UPDATE {TABLE} SET balance = 0 WHERE conv_id = 11")
            cur.execute("ROLLBACK")
            self.assertFalse(c.server_status & 1)
        b = self.table.balances()
        self.assertEqual((b[3], b[11]), (INITIAL, INITIAL))
        # A client that goes away mid-transaction: every branch rolled back, rows free.
        with c.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute(f"UPDATE {TABLE} SET balance = 1 WHERE conv_id = 4")
            cur.execute(f"UPDATE {TABLE} SET balance = 1 WHERE conv_id = 12")
        c.close()
        time.sleep(0.3)
        d = sf.direct(port_of(12))
        sf.rows(d, "SET SESSION innodb_lock_wait_timeout = 2")
        sf.rows(d, f"UPDATE {self.table.physical(12)} SET balance = balance WHERE conv_id = 12")
        d.close()
        b = self.table.balances()
        self.assertEqual((b[4], b[12]), (INITIAL, INITIAL))

    def test_3_prepared_statements_follow_the_same_rules(self):
        c = self.run_.connect()
        with c.cursor() as cur:
            cur.execute("BEGIN")
        status = prepared_write(c, f"UPDATE {TABLE} SET balance = balance - 7 WHERE conv_id = 5")
        self.assertTrue(status & 1, hex(status))
        status = prepared_write(c, f"UPDATE {TABLE} SET balance = balance + 7 WHERE conv_id = 13")
        self.assertTrue(status & 1, hex(status))
        prepared_write(c, "COMMIT")
        b = self.table.balances()
        self.assertEqual((b[5], b[13]), (INITIAL - 7, INITIAL + 7))
        self.assertEqual(own_prepared(sf.DB0_PORT) + own_prepared(sf.DB1_PORT), [])
        c.close()

    def test_4_savepoints_and_chain_refused_across_branches(self):
        c = self.run_.connect()
        with c.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute(f"UPDATE {TABLE} SET balance = balance - 1 WHERE conv_id = 6")
            cur.execute("SAVEPOINT one_branch")  # one branch: the server's own savepoint
            cur.execute(f"UPDATE {TABLE} SET balance = balance + 1 WHERE conv_id = 14")
            code, msg = sf.error_of(lambda: cur.execute("SAVEPOINT two"))
            self.assertEqual(code, 9171, msg)
            code, msg = sf.error_of(lambda: cur.execute("ROLLBACK TO SAVEPOINT one_branch"))
            self.assertEqual(code, 9171, msg)
            code, msg = sf.error_of(lambda: cur.execute("COMMIT AND CHAIN"))
            self.assertEqual(code, 9172, msg)
            self.assertTrue(c.server_status & 1)
            cur.execute("COMMIT")
        b = self.table.balances()
        self.assertEqual((b[6], b[14]), (INITIAL - 1, INITIAL + 1))
        c.close()

    def test_4c_a_second_begin_commits_every_branch_as_on_one_server(self):
        """BEGIN inside a transaction commits it first on one server (an implicit commit, as DDL and
        LOCK TABLES do); inside an XA branch the server would refuse it (1399), so the proxy commits the
        global transaction itself and the statement goes on. The DDL forms are unit-tested
        (parser_tests --gtest_filter='ImplicitCommit*'): the test user has no allow_ddl."""
        c = self.run_.connect()
        with c.cursor() as cur:
            # Two branches, then BEGIN: both commit; the new transaction is rolled back alone.
            cur.execute("BEGIN")
            cur.execute(f"UPDATE {TABLE} SET balance = balance - 3 WHERE conv_id = 6")
            cur.execute(f"UPDATE {TABLE} SET balance = balance + 3 WHERE conv_id = 14")
            cur.execute("BEGIN")
            self.assertEqual(own_prepared(sf.DB0_PORT) + own_prepared(sf.DB1_PORT), [])
            cur.execute(f"UPDATE {TABLE} SET balance = 0 WHERE conv_id = 7")
            cur.execute(f"UPDATE {TABLE} SET balance = 0 WHERE conv_id = 15")
            cur.execute("ROLLBACK")
            self.assertFalse(c.server_status & 1)
            b = self.table.balances()
            self.assertEqual((b[6], b[14], b[7], b[15]), (INITIAL - 3, INITIAL + 3, INITIAL, INITIAL))
            # One branch, then START TRANSACTION: the first commits.
            cur.execute("BEGIN")
            cur.execute(f"UPDATE {TABLE} SET balance = balance - 2 WHERE conv_id = 1")
            cur.execute("START TRANSACTION")
            cur.execute(f"UPDATE {TABLE} SET balance = balance + 2 WHERE conv_id = 9")
            cur.execute("ROLLBACK")
            b = self.table.balances()
            self.assertEqual((b[1], b[9]), (INITIAL - 2, INITIAL))
            # BEGIN with nothing run yet, then BEGIN again: one transaction, committed whole.
            cur.execute("BEGIN")
            cur.execute("BEGIN")
            cur.execute(f"UPDATE {TABLE} SET balance = balance - 1 WHERE conv_id = 2")
            cur.execute(f"UPDATE {TABLE} SET balance = balance + 1 WHERE conv_id = 10")
            cur.execute("COMMIT")
            b = self.table.balances()
            self.assertEqual((b[2], b[10]), (INITIAL - 1, INITIAL + 1))
        self.assertEqual(own_prepared(sf.DB0_PORT) + own_prepared(sf.DB1_PORT), [])
        c.close()

    def test_4d_multi_statement_reads_and_writes_join_the_branches(self):
        """Inside a transaction opened as XA, a multi-statement packet of reads and writes runs, each
        statement on its backend's branch; one holding transaction control is refused (9172), naming it."""
        c = self.run_.connect(client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS)
        with c.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute(f"UPDATE {TABLE} SET balance = balance - 4 WHERE conv_id = 3")
            cur.execute(f"UPDATE {TABLE} SET balance = balance - 1 WHERE conv_id = 3; "
                        f"UPDATE {TABLE} SET balance = balance + 5 WHERE conv_id = 11; "
                        f"SELECT balance FROM {TABLE} WHERE conv_id = 11")
            while cur.nextset():
                pass
            code, msg = sf.error_of(lambda: cur.execute(f"SELECT 1; COMMIT"))
            self.assertEqual(code, 9172, msg)
            self.assertIn("COMMIT", msg)
            cur.execute("COMMIT")
        b = self.table.balances()
        self.assertEqual((b[3], b[11]), (INITIAL - 5, INITIAL + 5))
        self.assertEqual(own_prepared(sf.DB0_PORT) + own_prepared(sf.DB1_PORT), [])
        c.close()

    def test_4e_rollback_warns_of_a_non_transactional_change(self):
        """ROLLBACK after a change to a MyISAM table warns (1196) on one server; the XA ROLLBACK's
        warning is the client's, in the OK and in SHOW WARNINGS (MariaDB's main.rollback test)."""
        d = sf.direct(sf.DB0_PORT)
        sf.rows(d, "DROP TABLE IF EXISTS it_xa_myisam")
        sf.rows(d, "CREATE TABLE it_xa_myisam (n INT NOT NULL PRIMARY KEY) ENGINE=MyISAM")
        try:
            c = self.run_.connect()
            with c.cursor() as cur:
                cur.execute("BEGIN WORK")
                cur.execute("INSERT INTO it_xa_myisam VALUES (4)")
                cur.execute("ROLLBACK")
                self.assertEqual(cur._result.warning_count, 1)  # in the OK packet
                cur.execute("SELECT @@warning_count")
                self.assertEqual(cur.fetchall(), ((1,),))
                cur.execute("SHOW WARNINGS")
                self.assertEqual([tuple(r[:2]) for r in cur.fetchall()], [("Warning", 1196)])
                cur.execute("SELECT n FROM it_xa_myisam")
                self.assertEqual(cur.fetchall(), ((4,),))
            c.close()
        finally:
            sf.rows(d, "DROP TABLE IF EXISTS it_xa_myisam")
            d.close()

    def test_4f_set_autocommit_on_commits_as_on_one_server(self):
        """SET autocommit = 1 while it is off commits the open transaction on one server (checked on 10.11);
        inside an XA branch the server would refuse it (1399), so the proxy commits the global transaction
        first. Already on: nothing commits. A value only the server can read (@v) is refused (9172)."""
        c = self.run_.connect()
        in_trans, autocommit = 1, 2  # SERVER_STATUS_IN_TRANS, SERVER_STATUS_AUTOCOMMIT
        with c.cursor() as cur:
            cur.execute("SET autocommit = 0")
            begin_transfer(cur, 4, 12, 3)
            cur.execute("SET autocommit = 1")
            self.assertFalse(c.server_status & in_trans)
            self.assertTrue(c.server_status & autocommit)
            self.assertEqual(own_prepared(sf.DB0_PORT) + own_prepared(sf.DB1_PORT), [])
            cur.execute("ROLLBACK")
            b = self.table.balances()
            self.assertEqual((b[4], b[12]), (INITIAL - 3, INITIAL + 3))
            # Already on: the transaction stays open and rolls back whole.
            begin_transfer(cur, 5, 13, 1)
            cur.execute("SET autocommit = 1")
            self.assertTrue(c.server_status & in_trans)
            cur.execute("ROLLBACK")
            b = self.table.balances()
            self.assertEqual((b[5], b[13]), (INITIAL, INITIAL))
            # A value the proxy cannot read: refused, the transaction goes on.
            cur.execute("SET autocommit = 0")
            begin_transfer(cur, 6, 14, 2)
            code, msg = sf.error_of(lambda: cur.execute("SET autocommit = (1)"))
            self.assertEqual(code, 9172, msg)
            self.assertTrue(c.server_status & in_trans)
            cur.execute("ROLLBACK")
            b = self.table.balances()
            self.assertEqual((b[6], b[14]), (INITIAL, INITIAL))
            # BEGIN not yet sent (nothing ran), then SET autocommit = 1: the next write autocommits.
            cur.execute("BEGIN")
            cur.execute("SET autocommit = 1")
            cur.execute(f"UPDATE {TABLE} SET balance = balance - 1 WHERE conv_id = 7")
            self.assertFalse(c.server_status & in_trans)
            cur.execute("ROLLBACK")
            self.assertEqual(self.table.balances()[7], INITIAL - 1)
        self.assertEqual(own_prepared(sf.DB0_PORT) + own_prepared(sf.DB1_PORT), [])
        c.close()

    def test_4b_clients_cannot_end_the_proxys_branches(self):
        """A client's own XA statement naming the proxy's ids (<xid_prefix>-...) is refused (9173), text and
        prepared, hex included; XA RECOVER still lists; the global transaction commits untouched."""
        c, other = self.run_.connect(), self.run_.connect()
        try:
            with c.cursor() as cur:
                cur.execute("BEGIN")
                cur.execute(f"UPDATE {TABLE} SET balance = balance - 3 WHERE conv_id = 3")
                cur.execute(f"UPDATE {TABLE} SET balance = balance + 3 WHERE conv_id = 11")
            gtrid = [r for r in self.admin_rows("SHOW TRANSACTIONS") if r[0].startswith(PREFIX + "-")][0][0]
            with other.cursor() as cur:
                for sql in (f"XA ROLLBACK '{gtrid}','db1'", f"XA COMMIT '{gtrid}','db0'",
                            f"xa end 0x{gtrid.encode().hex()}, 0x{b'db1'.hex()}", f"XA COMMIT _latin1'{gtrid}'"):
                    code, msg = sf.error_of(lambda: cur.execute(sql))
                    self.assertEqual(code, 9173, (sql, msg))
                cur.execute("XA RECOVER")  # lists, ends nothing: allowed
            multi = self.run_.connect(client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS)
            try:
                def both():
                    with multi.cursor() as m:
                        m.execute(f"SELECT 1; XA ROLLBACK '{gtrid}'")
                        while m.nextset():
                            pass
                code, msg = sf.error_of(both)  # one statement of a multi-statement packet
                self.assertEqual(code, 9173, msg)
            finally:
                multi.close()
            code, msg = sf.error_of(lambda: other._execute_command(0x16, f"XA ROLLBACK '{gtrid}'") or
                                    other._read_packet())
            self.assertEqual(code, 9173, msg)
            with c.cursor() as cur:
                cur.execute("COMMIT")
        finally:
            c.close()
            other.close()
        b = self.table.balances()
        self.assertEqual((b[3], b[11]), (INITIAL - 3, INITIAL + 3))

    def test_5_deadlock_rolls_back_every_branch(self):
        a, b = self.run_.connect(), self.run_.connect()
        ca, cb = a.cursor(), b.cursor()
        ca.execute("BEGIN")
        cb.execute("BEGIN")
        ca.execute(f"UPDATE {TABLE} SET balance = balance + 5 WHERE conv_id = 0")   # db0
        cb.execute(f"UPDATE {TABLE} SET balance = balance + 7 WHERE conv_id = 1")   # db0
        ca.execute(f"UPDATE {TABLE} SET balance = balance + 5 WHERE conv_id = 8")   # db1
        cb.execute(f"UPDATE {TABLE} SET balance = balance + 7 WHERE conv_id = 9")   # db1
        errors = {}

        def go(name, cur, account):
            try:
                cur.execute(f"UPDATE {TABLE} SET balance = balance + 1 WHERE conv_id = {account}")
            except pymysql.err.MySQLError as e:
                errors[name] = e.args[0]

        t = threading.Thread(target=go, args=("a", ca, 9))
        t.start()
        time.sleep(0.3)
        go("b", cb, 8)
        t.join()
        self.assertEqual(list(errors.values()), [1213], errors)
        victim, survivor = (a, b) if "a" in errors else (b, a)
        victim.cursor().execute("DO 0")  # an OK packet (pymysql reads status flags from OKs only)
        self.assertFalse(victim.server_status & 1)  # no transaction left open
        survivor.cursor().execute("COMMIT")
        bal = self.table.balances()
        if victim is a:
            self.assertEqual((bal[0], bal[8], bal[1], bal[9]), (INITIAL, INITIAL + 1, INITIAL + 7, INITIAL + 7))
        else:
            self.assertEqual((bal[0], bal[8], bal[1], bal[9]), (INITIAL + 5, INITIAL + 5, INITIAL, INITIAL + 1))
        # The victim's session goes on: ROLLBACK is harmless, a new transfer works.
        victim.cursor().execute("ROLLBACK")
        transfer(victim, 2, 10, 3)
        self.assertEqual(own_prepared(sf.DB0_PORT) + own_prepared(sf.DB1_PORT), [])
        a.close()
        b.close()

    def test_6_concurrent_transfers_keep_the_total_and_figures(self):
        self.assertEqual(sum(self.table.balances().values()), ACCOUNTS * INITIAL)
        per_thread, threads = 60, 6
        done = [0]
        lock = threading.Lock()

        def worker(seed):
            rng = random.Random(seed)
            c = self.run_.connect()
            for _ in range(per_thread):
                src, dst = cross_pair(rng)
                for _attempt in range(20):
                    try:
                        transfer(c, src, dst, rng.randint(1, 50))
                        with lock:
                            done[0] += 1
                        break
                    except pymysql.err.OperationalError as e:
                        if e.args[0] not in (1213, 1205):
                            raise
                        c.cursor().execute("ROLLBACK")
            c.close()

        start = time.monotonic()
        ts = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        elapsed = time.monotonic() - start
        self.assertEqual(done[0], per_thread * threads)
        self.assertEqual(sum(self.table.balances().values()), ACCOUNTS * INITIAL)
        self.assertEqual(own_prepared(sf.DB0_PORT) + own_prepared(sf.DB1_PORT), [])
        print(f"\n  cross-backend transfers: {done[0]} in {elapsed:.2f}s = {done[0] / elapsed:.0f}/s "
              f"({threads} clients)", flush=True)
        # Commit latency: one backend (XA ... ONE PHASE) vs two (two-phase), one client.
        c = self.run_.connect()
        figures = {}
        for label, pair in (("one backend", (0, 1)), ("two backends", (0, 8))):
            samples = []
            for i in range(100):
                with c.cursor() as cur:
                    cur.execute("BEGIN")
                    cur.execute(f"UPDATE {TABLE} SET balance = balance - 1 WHERE conv_id = {pair[0]}")
                    cur.execute(f"UPDATE {TABLE} SET balance = balance + 1 WHERE conv_id = {pair[1]}")
                    t0 = time.perf_counter()
                    cur.execute("COMMIT")
                    samples.append(time.perf_counter() - t0)
            samples.sort()
            figures[label] = (samples[len(samples) // 2] * 1000, samples[int(len(samples) * 0.95)] * 1000)
        c.close()
        for label, (p50, p95) in figures.items():
            print(f"  COMMIT latency, {label}: p50 {p50:.2f} ms, p95 {p95:.2f} ms", flush=True)

    def test_8_participant_killed_between_prepare_and_commit(self):
        """db1 SIGKILLed after the decision, before its XA COMMIT: the client gets OK, and once db1
        is back (its prepared branch survives the crash) recovery commits it."""
        self.run_.stop()
        os.environ["SHARDPROXY_XA_FAILPOINT"] = "after_decision:1:2500"
        try:
            self.run_.start()
        finally:
            os.environ.pop("SHARDPROXY_XA_FAILPOINT", None)
        result = {}

        def go():
            c = self.run_.connect()
            try:
                transfer(c, 0, 8, 77)
                result["ok"] = True
            except pymysql.err.MySQLError as e:
                result["error"] = e
            finally:
                c.close()

        t = threading.Thread(target=go)
        t.start()
        deadline = time.monotonic() + 10
        while not own_prepared(sf.DB1_PORT):  # both branches prepared, the decision being written
            self.assertLess(time.monotonic(), deadline, "the transfer never prepared its db1 branch")
            time.sleep(0.02)
        time.sleep(0.3)  # its XA PREPARE answered and the decision written: the commit pauses 2.5 s there
        restarted = False
        try:
            sf.kill_backend(sf.DB1_PORT)
            t.join(30)
            self.assertEqual(result, {"ok": True})  # committed from the moment the decision was durable
            self.assertEqual(self.table.balances_on(sf.DB0_PORT)[0], INITIAL - 77)
            sf.restart_backend(sf.DB1_PORT)
            restarted = True
            back = time.monotonic()
            resolved = wait_recovered(self, timeout=30)
            b = self.table.balances()
            self.assertEqual((b[0], b[8]), (INITIAL - 77, INITIAL + 77))
            print(f"\n  db1 killed before its XA COMMIT: its branch committed by recovery "
                  f"{resolved - back:.2f}s after db1 was back", flush=True)
        finally:
            if not restarted:
                sf.restart_backend(sf.DB1_PORT)
            self.run_.stop()

    def crash_round(self, step, nth, rng):
        """Transfers from 4 clients until the proxy _exits at `step`; returns (confirmed, unconfirmed)."""
        self.run_.stop()
        os.environ["SHARDPROXY_XA_FAILPOINT"] = f"{step}:{nth}"
        try:
            self.run_.start()
        finally:
            os.environ.pop("SHARDPROXY_XA_FAILPOINT", None)
        confirmed, unconfirmed, endings = [], [], []
        lock = threading.Lock()

        def worker(seed):
            r = random.Random(seed)
            try:
                c = self.run_.connect()
            except pymysql.err.MySQLError:
                return
            while True:
                src, dst = cross_pair(r)
                amount = r.randint(1, 10 ** 6)
                try:
                    transfer(c, src, dst, amount)
                    with lock:
                        confirmed.append((src, dst, amount))
                except pymysql.err.OperationalError as e:
                    if e.args[0] in (1213, 1205):
                        try:
                            c.cursor().execute("ROLLBACK")
                        except pymysql.err.MySQLError:
                            return
                        continue
                    with lock:
                        unconfirmed.append((src, dst, amount))  # the proxy died under it: outcome unknown
                        endings.append(repr(e))
                    return
                except pymysql.err.InterfaceError:
                    with lock:
                        unconfirmed.append((src, dst, amount))
                    return

        ts = [threading.Thread(target=worker, args=(rng.random(),)) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        try:  # the clients may see their sockets close a moment before the process is gone
            code = self.run_.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.fail(f"the proxy did not stop at {step}; the clients ended with {endings}")
        self.assertEqual(code, 86, f"{step}: the proxy ended otherwise than at the fail point")
        return confirmed, unconfirmed

    def test_7_crash_at_every_step_is_all_or_nothing(self):
        rng = random.Random(35)
        expected = {a: INITIAL for a in range(ACCOUNTS)}
        crashes, transfers, recover_s = 0, 0, []
        for round_ in range(ROUNDS):
            for step in STEPS:
                confirmed, unconfirmed = self.crash_round(step, rng.randint(1, 4), rng)
                crashes += 1
                for src, dst, amount in confirmed:
                    expected[src] -= amount
                    expected[dst] += amount
                killed_at = time.monotonic()
                self.run_.start()  # recovery at start-up, then every 200 ms
                recover_s.append(wait_recovered(self) - killed_at)
                actual = self.table.balances()
                self.assertEqual(sum(actual.values()), ACCOUNTS * INITIAL, f"total changed after {step}")
                # Some whole subset of the unconfirmed transfers explains every balance.
                match = None
                for k in range(len(unconfirmed) + 1):
                    for subset in itertools.combinations(unconfirmed, k):
                        trial = dict(expected)
                        for src, dst, amount in subset:
                            trial[src] -= amount
                            trial[dst] += amount
                        if trial == actual:
                            match = subset
                            break
                    if match is not None:
                        break
                self.assertIsNotNone(match, f"after {step}: balances are not explained by whole transfers "
                                            f"(unconfirmed {unconfirmed})")
                if step in ("after_decision", "between_commits"):
                    # The decision was durable: the transfer that reached it committed.
                    self.assertGreaterEqual(len(match), 1, f"{step}: the decided transfer was lost")
                expected = actual
                transfers += len(confirmed) + len(unconfirmed)
        print(f"\n  crash injection: {crashes} crashes over {len(STEPS)} steps, {transfers} transfers; "
              f"branches resolved {max(recover_s):.2f}s at most after restart", flush=True)


if __name__ == "__main__":
    unittest.main()
