"""A transaction whose backend connection dies between two of its statements
(issue 11, case 2). Before, the session forgot the transaction and went on in
autocommit: `BEGIN; INSERT a; <loss>; INSERT b (error); INSERT c; COMMIT`
committed c and answered OK. Now nothing after the loss can commit: every
statement is refused with 9004 (SQLSTATE 40001) until ROLLBACK, and COMMIT
fails. The loss is real: the backend thread is killed on the server, or the
server is restarted."""
import unittest
import uuid

import pymysql

from . import sptest

CONV_BASE = 9_200_000
DB0_CONV = CONV_BASE + 2   # shard 02 on db0
DB1_CONV = CONV_BASE + 9   # shard 09 on db1
INSERT = ("INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) "
          "VALUES ({conv}, {seq}, {seq}, 77, 1, 'lost-tx', 0)")
SERVER_STATUS_IN_TRANS = 0x0001
LOST = 9004


def port_of(conv):
    return sptest.DB1_PORT if conv % 16 >= 8 else sptest.DB0_PORT


class LostTransaction(unittest.TestCase):
    def setUp(self):
        self.seq = uuid.uuid4().int % 10**12

    def next_seq(self):
        self.seq += 1
        return self.seq

    def count(self, conv, seqs):
        """Rows with these seqs, counted on the backend that holds them."""
        conn = sptest.direct(port_of(conv))
        try:
            table = f"msg_{conv % 16:02d}"
            marks = ", ".join(str(s) for s in seqs)
            return sptest.scalar(conn, f"SELECT COUNT(*) FROM {table} WHERE conv_id = %s AND seq IN ({marks})",
                                 (conv,))
        finally:
            conn.close()

    def kill_transaction_thread(self, conv):
        """Kills, on the server, the connection that holds the open transaction on conv's table.

        As root: INNODB_TRX needs PROCESS, which the proxy's backend account does not have.
        """
        conn = sptest.root(port_of(conv))
        try:
            # INNODB_TRX is a snapshot InnoDB refreshes at most every 100 ms:
            # wait for the one open transaction of a live connection.
            def holder():
                trx = sptest.query(conn, "SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX")
                live = {r[0] for r in sptest.query(conn, "SELECT ID FROM information_schema.PROCESSLIST")}
                return trx[0][0] if len(trx) == 1 and trx[0][0] in live else None
            thread = sptest.wait_until(holder, 10, interval_s=0.15, what="the open transaction on the backend")
            sptest.query(conn, f"KILL CONNECTION {thread}")
        finally:
            conn.close()

    def assert_refused(self, conn, sql, code=LOST):
        with self.assertRaises(pymysql.err.MySQLError) as caught:
            sptest.query(conn, sql)
        self.assertEqual(caught.exception.args[0], code, caught.exception.args)

    def lose(self, conv, begin="BEGIN"):
        """BEGIN; INSERT a; the backend connection dies; INSERT b fails. Returns (conn, seqs)."""
        conn = sptest.proxy(read_timeout=30)
        a, b = self.next_seq(), self.next_seq()
        sptest.query(conn, begin)
        sptest.query(conn, INSERT.format(conv=conv, seq=a))
        self.kill_transaction_thread(conv)
        with self.assertRaises(pymysql.err.MySQLError) as caught:
            sptest.query(conn, INSERT.format(conv=conv, seq=b))
        self.assertIn("rolled back", str(caught.exception))
        return conn, [a, b]

    def test_nothing_after_the_loss_commits_on_either_backend(self):
        for conv in (DB0_CONV, DB1_CONV):
            with self.subTest(conv=conv):
                conn, seqs = self.lose(conv)
                try:
                    c = self.next_seq()
                    self.assert_refused(conn, INSERT.format(conv=conv, seq=c))
                    self.assert_refused(conn, "SELECT 1")
                    self.assert_refused(conn, "SET autocommit = 1")  # would commit on a server
                    self.assertTrue(conn.server_status & SERVER_STATUS_IN_TRANS,
                                    "the client is still told it is inside a transaction")
                    self.assert_refused(conn, "COMMIT")
                    seqs.append(c)
                    # COMMIT ended it (with an error): the session works again, in autocommit.
                    d = self.next_seq()
                    sptest.query(conn, INSERT.format(conv=conv, seq=d))
                    self.assertEqual(self.count(conv, [d]), 1)
                    sptest.query(conn, f"DELETE FROM msg WHERE conv_id = {conv} AND seq = {d}")
                finally:
                    conn.close()
                self.assertEqual(self.count(conv, seqs), 0, "no statement of the lost transaction committed")

    def test_rollback_ends_the_lost_transaction(self):
        conn, seqs = self.lose(DB1_CONV, begin="START TRANSACTION")
        try:
            sptest.query(conn, "ROLLBACK")
            self.assertFalse(conn.server_status & SERVER_STATUS_IN_TRANS)
            # A new transaction works on the same session.
            e = self.next_seq()
            sptest.query(conn, "BEGIN")
            sptest.query(conn, INSERT.format(conv=DB1_CONV, seq=e))
            sptest.query(conn, "COMMIT")
            self.assertEqual(self.count(DB1_CONV, [e]), 1)
            sptest.query(conn, f"DELETE FROM msg WHERE conv_id = {DB1_CONV} AND seq = {e}")
        finally:
            conn.close()
        self.assertEqual(self.count(DB1_CONV, seqs), 0)

    def test_autocommit_off_transaction_lost(self):
        """The implicit transaction of autocommit=0 is lost the same way."""
        conn = sptest.proxy(read_timeout=30, autocommit=False)
        try:
            a, b = self.next_seq(), self.next_seq()
            sptest.query(conn, INSERT.format(conv=DB1_CONV, seq=a))
            self.kill_transaction_thread(DB1_CONV)
            with self.assertRaises(pymysql.err.MySQLError):
                sptest.query(conn, INSERT.format(conv=DB1_CONV, seq=b))
            self.assert_refused(conn, INSERT.format(conv=DB1_CONV, seq=b))
            self.assert_refused(conn, "COMMIT")
        finally:
            conn.close()
        self.assertEqual(self.count(DB1_CONV, [a, b]), 0)

    def test_server_restart_between_statements(self):
        conv = DB1_CONV
        port = str(sptest.DB1_PORT)
        conn = sptest.proxy(read_timeout=60)
        a, b, c = self.next_seq(), self.next_seq(), self.next_seq()
        try:
            sptest.query(conn, "BEGIN")
            sptest.query(conn, INSERT.format(conv=conv, seq=a))
            sptest.cluster("down", "--ports", port)
            sptest.cluster("up", "--ports", port)
            with self.assertRaises(pymysql.err.MySQLError):
                sptest.query(conn, INSERT.format(conv=conv, seq=b))
            self.assert_refused(conn, INSERT.format(conv=conv, seq=c))
            self.assert_refused(conn, "COMMIT")
        finally:
            conn.close()
        self.assertEqual(self.count(conv, [a, b, c]), 0)


if __name__ == "__main__":
    unittest.main()
