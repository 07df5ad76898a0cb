"""Transactions and session state through the proxy (issue 11), with PyMySQL.

Read-your-write inside a transaction on each backend (text protocol; the six
client drivers in tests/integration/drivers/*tx* cover server-side prepared
statements), ROLLBACK really undone and COMMIT visible from other connections
and on the backend itself, autocommit switched off by every spelling the server
accepts (checked through the OK packet's SERVER_STATUS_AUTOCOMMIT / IN_TRANS
flags), a multi-row INSERT spanning both backends under autocommit off (inside
the client's transaction or refused, never OK-then-lost; also through a proxy of
its own with scatter.multi_shard_writes: best_effort), and state isolation: a
procedure that changes sql_mode and a user variable must not leak to other
sessions through the backend pool.

Rows use conv_id 9_100_096 + shard (9_100_096 % 16 == 0): shard 2 lives on db0,
shard 9 on db1 (conf/shard_map.yaml: shards 0-7 on db0, 8-15 on db1).

SP_TX_DIRECT=1 runs the same flows straight against MariaDB (db0, database
im_txref holding an unsharded `msg`), to prove the tests themselves right:

    cd tests/integration && SP_TX_DIRECT=1 SP_DB0_PORT=3307 /usr/bin/python3 -m unittest -v pyit.test_transactions
"""
import os
import random
import threading
import time
import unittest
import uuid

import pymysql

from . import sptest

DIRECT = os.environ.get("SP_TX_DIRECT", "") == "1"
REF_DB = "im_txref"
SERVER_STATUS_IN_TRANS = 0x0001
SERVER_STATUS_AUTOCOMMIT = 0x0002

CONV_BASE = 9_100_096  # % 16 == 0; other tx tests use other multiples of 16 from 9_100_000
DB0_CONV = CONV_BASE + 2
DB1_CONV = CONV_BASE + 9
SPAN_CONVS = (CONV_BASE + 3, CONV_BASE + 12, CONV_BASE + 5, CONV_BASE + 14)  # db0, db1, db0, db1
ALL_CONVS = (DB0_CONV, DB1_CONV) + SPAN_CONVS

INSERT = ("INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) "
          "VALUES ({conv}, {seq}, {msg_id}, 77, 1, '{content}', 0)")


def ensure_reference():
    """Direct mode: an unsharded msg with the physical tables' DDL in im_txref on db0."""
    conn = sptest.root(sptest.DB0_PORT)
    try:
        sptest.query(conn, f"CREATE DATABASE IF NOT EXISTS {REF_DB}")
        sptest.query(conn, f"CREATE TABLE IF NOT EXISTS {REF_DB}.msg LIKE im.msg_00")
    finally:
        conn.close()


def target(autocommit=True, **kwargs):
    """A session on what is under test: the proxy, or (SP_TX_DIRECT=1) MariaDB itself."""
    if DIRECT:
        kwargs.setdefault("connect_timeout", 10)
        kwargs.setdefault("read_timeout", 60)
        return pymysql.connect(host="127.0.0.1", port=sptest.DB0_PORT, user=sptest.ROOT_USER,
                               password=sptest.ROOT_PASSWORD, database=REF_DB, charset="utf8mb4",
                               autocommit=autocommit, **kwargs)
    return sptest.proxy(autocommit=autocommit, **kwargs)


class Rows:
    """Unique rows of this run and where to look for them."""

    def __init__(self):
        self.seq_base = random.randrange(1_000_000, 1_000_000_000) * 1000
        self.n = 0

    def next(self, conv):
        self.n += 1
        seq = self.seq_base + self.n
        return conv, seq, conv * 1000 + self.n  # msg_id unique: conv_ids differ by >= 1, n < 1000

    @staticmethod
    def insert_sql(conv, seq, msg_id):
        return INSERT.format(conv=conv, seq=seq, msg_id=msg_id, content=f"tx-{conv}-{seq}")

    @staticmethod
    def count_everywhere(conv, seq):
        """(count through a new session of the target, count in the physical table on its backend)."""
        conn = target()
        try:
            through = sptest.scalar(conn, "SELECT COUNT(*) FROM msg WHERE conv_id = %s AND seq = %s", (conv, seq))
        finally:
            conn.close()
        if DIRECT:
            return through, through
        shard = conv % 16
        db = sptest.direct(sptest.DB0_PORT if shard < 8 else sptest.DB1_PORT)
        try:
            physical = sptest.scalar(db, f"SELECT COUNT(*) FROM msg_{shard:02d} WHERE conv_id = %s AND seq = %s",
                                     (conv, seq))
        finally:
            db.close()
        return through, physical


def clean(convs=ALL_CONVS):
    conn = target()
    try:
        for conv in convs:
            sptest.query(conn, "DELETE FROM msg WHERE conv_id = %s", (conv,))
    finally:
        conn.close()


def setUpModule():
    if DIRECT:
        ensure_reference()
    clean()


def tearDownModule():
    clean()


class TxCase(unittest.TestCase):
    def setUp(self):
        self.rows = Rows()
        self.addCleanup(clean)

    def assertRowCount(self, conv, seq, want, when):
        self.assertEqual(Rows.count_everywhere(conv, seq), (want, want),
                         f"{when}: conv_id {conv} seq {seq} (shard {conv % 16}): (through a new session, on the backend)")

    def read_back(self, conn, conv, seq):
        return sptest.query(conn, "SELECT seq, content FROM msg WHERE conv_id = %s AND seq = %s", (conv, seq))


class ReadYourWrite(TxCase):
    """BEGIN; INSERT; SELECT of that row in the same transaction; ROLLBACK / COMMIT."""

    def flow(self, conv, begin):
        for ending in ("ROLLBACK", "COMMIT"):
            with self.subTest(conv=conv, begin=begin, ending=ending):
                conn = target()
                try:
                    row = self.rows.next(conv)
                    sptest.query(conn, begin)
                    self.assertTrue(conn.server_status & SERVER_STATUS_IN_TRANS, f"{begin}: IN_TRANS not set")
                    with conn.cursor() as cur:
                        self.assertEqual(cur.execute(Rows.insert_sql(*row)), 1)
                    self.assertEqual(self.read_back(conn, row[0], row[1]),
                                     ((row[1], f"tx-{row[0]}-{row[1]}".encode()),))
                    self.assertRowCount(row[0], row[1], 0, "uncommitted, seen from outside")
                    sptest.query(conn, ending)
                    self.assertFalse(conn.server_status & SERVER_STATUS_IN_TRANS, f"{ending}: IN_TRANS still set")
                    want = 1 if ending == "COMMIT" else 0
                    self.assertEqual(len(self.read_back(conn, row[0], row[1])), want)
                finally:
                    conn.close()
                self.assertRowCount(row[0], row[1], want, f"after {ending}")

    def test_db1_begin(self):
        self.flow(DB1_CONV, "BEGIN")

    def test_db0_begin(self):
        self.flow(DB0_CONV, "BEGIN")

    def test_db1_start_transaction(self):
        self.flow(DB1_CONV, "START TRANSACTION")

    def test_db0_start_transaction(self):
        self.flow(DB0_CONV, "START TRANSACTION")

    def test_driver_autocommit_false_db1(self):
        """PyMySQL's autocommit=False (SET AUTOCOMMIT = 0 on connect), conn.rollback()/commit()."""
        for ending in ("rollback", "commit"):
            with self.subTest(ending=ending):
                conn = target(autocommit=False)
                try:
                    row = self.rows.next(DB1_CONV)
                    with conn.cursor() as cur:
                        self.assertEqual(cur.execute(Rows.insert_sql(*row)), 1)
                    self.assertEqual(conn.server_status & (SERVER_STATUS_IN_TRANS | SERVER_STATUS_AUTOCOMMIT),
                                     SERVER_STATUS_IN_TRANS, f"status {conn.server_status:#06x}")
                    self.assertEqual(len(self.read_back(conn, row[0], row[1])), 1)
                    getattr(conn, ending)()
                finally:
                    conn.close()
                self.assertRowCount(row[0], row[1], 1 if ending == "commit" else 0, f"after {ending}()")


class AutocommitSpellings(TxCase):
    """Every spelling of autocommit off: the OK says so, the INSERT stays in a
    transaction, ROLLBACK removes it."""

    SPELLINGS = (
        ("SET autocommit=0",),
        ("SET autocommit=false",),
        ("SET autocommit=FALSE",),
        ("SET autocommit='off'",),
        ("SET autocommit=OFF",),
        ("SET @v = 0", "SET autocommit=@v"),
        ("SET SESSION autocommit=0",),
        ("SET @@autocommit=0",),
        ("SET @@session.autocommit=0",),
    )

    def spelling(self, statements, conv):
        conn = target(autocommit=None)  # leave the server default: autocommit on
        try:
            self.assertTrue(conn.server_status & SERVER_STATUS_AUTOCOMMIT, "autocommit on at connect")
            for sql in statements:
                sptest.query(conn, sql)
            self.assertFalse(conn.server_status & SERVER_STATUS_AUTOCOMMIT,
                             f"OK of {statements[-1]!r} still says autocommit (status {conn.server_status:#06x})")
            self.assertEqual(sptest.scalar(conn, "SELECT @@autocommit"), 0)
            row = self.rows.next(conv)
            pinned_elsewhere = not DIRECT and any("SET @v" in s for s in statements) and conv == DB1_CONV
            if pinned_elsewhere:
                # A user variable keeps the session on the backend it was set
                # on (db0, the default); with autocommit off the INSERT would
                # open a transaction on db1 too: refused, nothing written
                # (docs/routing.md, "Transactions").
                with conn.cursor() as cur, self.assertRaises(pymysql.err.OperationalError) as refused:
                    cur.execute(Rows.insert_sql(*row))
                self.assertEqual(refused.exception.args[0], 9120)
                sptest.query(conn, "ROLLBACK")
                return
            with conn.cursor() as cur:
                self.assertEqual(cur.execute(Rows.insert_sql(*row)), 1)
            self.assertEqual(conn.server_status & (SERVER_STATUS_IN_TRANS | SERVER_STATUS_AUTOCOMMIT),
                             SERVER_STATUS_IN_TRANS, f"OK of the INSERT: status {conn.server_status:#06x}")
            self.assertEqual(len(self.read_back(conn, row[0], row[1])), 1, "read your write")
            self.assertRowCount(row[0], row[1], 0, "uncommitted, seen from outside")
            sptest.query(conn, "ROLLBACK")
            self.assertEqual(len(self.read_back(conn, row[0], row[1])), 0, "after ROLLBACK, same session")
        finally:
            conn.close()
        self.assertRowCount(row[0], row[1], 0, f"after {statements} and ROLLBACK")

    def test_each_spelling_db1(self):
        for statements in self.SPELLINGS:
            with self.subTest(spelling=" ; ".join(statements)):
                self.spelling(statements, DB1_CONV)

    def test_each_spelling_db0(self):
        for statements in self.SPELLINGS:
            with self.subTest(spelling=" ; ".join(statements)):
                self.spelling(statements, DB0_CONV)


class MultiShardInsertUnderAutocommitOff(TxCase):
    """A multi-row INSERT whose rows land on both backends, with autocommit off:
    either OK and part of the client's transaction (ROLLBACK removes every row,
    COMMIT keeps every row) or an error and no row at all. Never OK then lost."""

    best_effort = None

    @classmethod
    def setUpClass(cls):
        if DIRECT:
            return
        import scatter_failure_proxy as sf  # tests/integration, the working directory

        class RealMap:  # the shard map of the test config, for a proxy of our own
            @staticmethod
            def map_text():
                with open(os.path.join(sptest.REPO_ROOT, "conf", "shard_map.yaml")) as f:
                    return f.read()

        cls.best_effort = sf.ProxyRun(f"tx_best_effort_{uuid.uuid4().hex[:6]}", RealMap,
                                      {"multi_shard_writes": "best_effort"})
        cls.best_effort.start()

    @classmethod
    def tearDownClass(cls):
        if cls.best_effort:
            cls.best_effort.stop()

    def targets(self):
        yield "test proxy" if not DIRECT else "MariaDB", lambda: target(autocommit=None)
        if self.best_effort:
            yield "proxy with best_effort", lambda: self.best_effort.connect(autocommit=None)

    def flow(self, connect, ending, spelling):
        rows = [self.rows.next(conv) for conv in SPAN_CONVS]
        values = ", ".join(f"({c}, {s}, {m}, 77, 1, 'span', 0)" for c, s, m in rows)
        conn = connect()
        outcome = None
        try:
            sptest.query(conn, spelling)
            try:
                with conn.cursor() as cur:
                    affected = cur.execute("INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) "
                                           f"VALUES {values}")
                outcome = "ok"
                self.assertEqual(affected, len(rows))
                sptest.query(conn, ending)
            except pymysql.err.MySQLError as e:
                if outcome == "ok":
                    raise
                outcome = f"error {e.args[0]}: {e.args[1] if len(e.args) > 1 else ''}"
                sptest.query(conn, "ROLLBACK")
        finally:
            conn.close()
        counts = [Rows.count_everywhere(c, s) for c, s, _ in rows]
        want = (1, 1) if outcome == "ok" and ending == "COMMIT" else (0, 0)
        self.assertEqual(counts, [want] * len(rows),
                         f"{outcome} then {ending}: (through a new session, on the backend) per row, shards "
                         f"{[c % 16 for c, _, _ in rows]}")
        return outcome

    def test_rollback(self):
        for name, connect in self.targets():
            for spelling in ("SET autocommit=0", "SET autocommit=false"):
                with self.subTest(target=name, spelling=spelling):
                    outcome = self.flow(connect, "ROLLBACK", spelling)
                    print(f"  {name}, {spelling}, ROLLBACK: {outcome}")

    def test_commit(self):
        for name, connect in self.targets():
            for spelling in ("SET autocommit=0", "SET autocommit=false"):
                with self.subTest(target=name, spelling=spelling):
                    outcome = self.flow(connect, "COMMIT", spelling)
                    print(f"  {name}, {spelling}, COMMIT: {outcome}")


class StateIsolation(unittest.TestCase):
    """State changed in session A in ways the proxy cannot read from the text
    (inside a procedure, through EXECUTE IMMEDIATE): no other session may see it
    through the backend pool, and A keeps exactly what the server gives it.

    Note: MariaDB saves sql_mode with a stored routine and restores it when the
    routine returns, so after CALL of a procedure doing SET SESSION sql_mode the
    caller still has its old sql_mode (while @leak = 42 stays). The test
    expects what the server does; time_zone (not restored) and EXECUTE IMMEDIATE
    change state that really stays in A."""

    DEFAULT = "<default>"

    def defaults(self):
        fresh = sptest.direct(sptest.DB0_PORT)
        try:
            return sptest.query(fresh, "SELECT @@sql_mode, @@time_zone")[0]
        finally:
            fresh.close()

    def isolation(self, body, statement, want_a):
        """body: procedure body or None; statement: run once in A; want_a: (sql_mode, time_zone, @leak) in A."""
        proc = f"sp_set_mode_{uuid.uuid4().hex[:8]}"
        admin = target()
        try:
            if body:
                sptest.query(admin, f"CREATE PROCEDURE {proc}() BEGIN {body} END")
            default_mode, default_tz = self.defaults()
            self.assertNotEqual(default_mode, "ANSI_QUOTES")
            self.assertNotEqual(default_tz, "+05:00")
            want_a = (default_mode if want_a[0] == self.DEFAULT else want_a[0],
                      default_tz if want_a[1] == self.DEFAULT else want_a[1], want_a[2])
            a = target()
            try:
                sptest.query(a, statement.format(proc=proc))
                for round_ in range(3):
                    for i in range(20):
                        other = target()
                        try:
                            self.assertEqual(sptest.query(other, "SELECT @@sql_mode, @@time_zone, @leak"),
                                             ((default_mode, default_tz, None),),
                                             f"round {round_}, new session {i} sees session A's state")
                        finally:
                            other.close()
                    self.assertEqual(sptest.query(a, "SELECT @@sql_mode, @@time_zone, @leak"), (want_a,),
                                     f"round {round_}: session A's own state")
                    if want_a[0] == "ANSI_QUOTES":  # really in force in A: "x" is an identifier there
                        with self.assertRaises(pymysql.err.MySQLError) as ctx:
                            sptest.query(a, 'SELECT "no_such_column_here"')
                        self.assertEqual(ctx.exception.args[0], 1054)
            finally:
                a.close()
        finally:
            if body:
                sptest.query(admin, f"DROP PROCEDURE IF EXISTS {proc}")
            admin.close()

    def test_procedure_sql_mode_and_variable(self):
        """The procedure of issue 11: sql_mode comes back (the server restores it), @leak stays in A only."""
        self.isolation("SET SESSION sql_mode = 'ANSI_QUOTES'; SET @leak = 42;", "CALL {proc}()",
                       (self.DEFAULT, self.DEFAULT, 42))

    def test_procedure_time_zone_and_variable(self):
        self.isolation("SET SESSION time_zone = '+05:00'; SET @leak = 43;", "CALL {proc}()",
                       (self.DEFAULT, "+05:00", 43))

    def test_execute_immediate_sql_mode(self):
        self.isolation(None, "EXECUTE IMMEDIATE 'SET SESSION sql_mode = ''ANSI_QUOTES'''",
                       ("ANSI_QUOTES", self.DEFAULT, None))


class ErrorsInsideATransaction(TxCase):
    """An ERR carries no status flags: the transaction's connection must stay
    with the session after a failed statement (before, a duplicate key inside
    BEGIN handed the open transaction to the pool and the session went on in
    autocommit elsewhere), and must be let go when the server rolled the
    transaction back (deadlock)."""

    def test_failed_statement_keeps_the_transaction(self):
        for conv in (DB0_CONV, DB1_CONV):
            with self.subTest(conv=conv):
                row = self.rows.next(conv)
                conn = target()
                try:
                    sptest.query(conn, "BEGIN")
                    sptest.query(conn, Rows.insert_sql(*row))
                    with self.assertRaises(pymysql.err.IntegrityError):
                        sptest.query(conn, Rows.insert_sql(*row))
                    self.assertEqual(sptest.scalar(conn, "SELECT @@in_transaction"), 1)
                    self.assertEqual(len(self.read_back(conn, row[0], row[1])), 1, "read your write after an error")
                    self.assertRowCount(row[0], row[1], 0, "uncommitted, seen from outside")
                    sptest.query(conn, "ROLLBACK")
                finally:
                    conn.close()
                self.assertRowCount(row[0], row[1], 0, "after ROLLBACK")

    def test_deadlock_victim_leaves_the_transaction(self):
        a, b = self.rows.next(DB1_CONV), self.rows.next(DB1_CONV)
        setup = target()
        try:
            sptest.query(setup, Rows.insert_sql(*a))
            sptest.query(setup, Rows.insert_sql(*b))
        finally:
            setup.close()
        s1, s2 = target(read_timeout=30), target(read_timeout=30)
        update = "UPDATE msg SET status = status + 1 WHERE conv_id = {} AND seq = {}"
        try:
            sptest.query(s1, "BEGIN")
            sptest.query(s1, update.format(a[0], a[1]))
            sptest.query(s2, "BEGIN")
            sptest.query(s2, update.format(b[0], b[1]))
            outcome = {}

            def s1_waits():
                try:
                    sptest.query(s1, update.format(b[0], b[1]))
                    outcome["s1"] = "ok"
                except pymysql.err.MySQLError as e:
                    outcome["s1"] = e.args[0]
            waiter = threading.Thread(target=s1_waits)
            waiter.start()
            time.sleep(0.5)  # s1 waits for b's lock
            try:
                sptest.query(s2, update.format(a[0], a[1]))
                outcome["s2"] = "ok"
            except pymysql.err.MySQLError as e:
                outcome["s2"] = e.args[0]
            waiter.join(30)
            self.assertEqual(sorted(map(str, outcome.values())), ["1213", "ok"], outcome)
            victim = s1 if outcome["s1"] == 1213 else s2
            survivor = s2 if victim is s1 else s1
            # The server rolled the victim's transaction back: the session knows.
            self.assertEqual(sptest.scalar(victim, "SELECT @@in_transaction"), 0)
            sptest.query(victim, "DO 1")  # PyMySQL reads server_status from OK packets only
            self.assertFalse(victim.server_status & SERVER_STATUS_IN_TRANS)
            # ... and is not held to the backend: a statement on the other one runs.
            other = self.rows.next(DB0_CONV)
            sptest.query(victim, Rows.insert_sql(*other))
            self.assertRowCount(other[0], other[1], 1, "autocommitted after the deadlock")
            sptest.query(survivor, "COMMIT")
        finally:
            s1.close()
            s2.close()


@unittest.skipIf(DIRECT, "proxy routing of SQL-level PREPARE and XA")
class SqlPrepareAndXa(unittest.TestCase):
    """PREPARE ... FROM naming msg runs on the shard its literal key names;
    an XA transaction starts on the backend of its first statement."""

    def setUp(self):
        self.rows = Rows()

    def test_sql_prepare_with_a_literal_key_on_each_backend(self):
        for conv in (DB0_CONV, DB1_CONV):
            with self.subTest(conv=conv):
                conv_id, seq, msg_id = self.rows.next(conv)
                conn = target()
                try:
                    sptest.query(conn, Rows.insert_sql(conv_id, seq, msg_id))
                    sptest.query(conn, f"PREPARE it_s FROM 'SELECT content FROM msg WHERE conv_id = {conv_id} "
                                       f"AND seq = ?'")
                    sptest.query(conn, f"SET @it_seq = {seq}")
                    rows = sptest.query(conn, "EXECUTE it_s USING @it_seq")
                    self.assertEqual([bytes(r[0]).decode() if isinstance(r[0], (bytes, bytearray)) else r[0]
                                      for r in rows], [f"tx-{conv_id}-{seq}"])
                    sptest.query(conn, "DEALLOCATE PREPARE it_s")
                    sptest.query(conn, f"DELETE FROM msg WHERE conv_id = {conv_id} AND seq = {seq}")
                finally:
                    conn.close()

    def test_sql_prepare_with_the_key_bound_at_execute_is_refused(self):
        conn = target()
        try:
            with self.assertRaises(pymysql.err.MySQLError) as refused:
                sptest.query(conn, "PREPARE it_s FROM 'SELECT content FROM msg WHERE conv_id = ?'")
            self.assertEqual(refused.exception.args[0], 9101)
            self.assertIn("EXECUTE ... USING", refused.exception.args[1])
        finally:
            conn.close()

    def test_xa_transaction_on_the_second_backend(self):
        conv_id, seq, msg_id = self.rows.next(DB1_CONV)
        xid = f"'it-xa-{seq}'"
        conn = target()
        try:
            sptest.query(conn, f"XA START {xid}")
            sptest.query(conn, Rows.insert_sql(conv_id, seq, msg_id))
            sptest.query(conn, f"XA END {xid}")
            sptest.query(conn, f"XA PREPARE {xid}")
            sptest.query(conn, f"XA ROLLBACK {xid}")
            self.assertEqual(Rows.count_everywhere(conv_id, seq), (0, 0))
            sptest.query(conn, f"XA START {xid}")
            sptest.query(conn, Rows.insert_sql(conv_id, seq, msg_id))
            sptest.query(conn, f"XA END {xid}")
            sptest.query(conn, f"XA COMMIT {xid} ONE PHASE")
            self.assertEqual(Rows.count_everywhere(conv_id, seq), (1, 1))
            # A second backend inside the same XA transaction is refused.
            conv2, seq2, msg2 = self.rows.next(DB0_CONV)
            conv3, seq3, msg3 = self.rows.next(DB1_CONV)
            sptest.query(conn, f"XA START {xid}")
            sptest.query(conn, Rows.insert_sql(conv3, seq3, msg3))
            with self.assertRaises(pymysql.err.MySQLError) as refused:
                sptest.query(conn, Rows.insert_sql(conv2, seq2, msg2))
            self.assertEqual(refused.exception.args[0], 9120)
            sptest.query(conn, f"XA END {xid}")
            sptest.query(conn, f"XA ROLLBACK {xid}")
            self.assertEqual(Rows.count_everywhere(conv2, seq2), (0, 0))
            sptest.query(conn, f"DELETE FROM msg WHERE conv_id = {conv_id} AND seq = {seq}")
        finally:
            conn.close()


if __name__ == "__main__":
    unittest.main()
