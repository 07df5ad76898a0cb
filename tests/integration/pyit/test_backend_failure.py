"""A backend failing under a running statement: the client gets an error, the
proxy keeps serving every other session, and recovers when the server is back."""
import threading
import time
import unittest
import uuid

import pymysql

from . import sptest


def run_in_thread(fn):
    """Runs fn() in a thread; returns a dict that gets 'result' or 'error', and the thread."""
    outcome = {}

    def body():
        try:
            outcome["result"] = fn()
        except Exception as e:  # noqa: BLE001 - inspected by the test
            outcome["error"] = e

    thread = threading.Thread(target=body)
    thread.start()
    return outcome, thread


class BackendFailure(unittest.TestCase):
    def backend_connection_running(self, marker):
        """Id of the db0 connection running the statement that carries marker."""
        db0 = sptest.direct(sptest.DB0_PORT)
        try:
            def find():
                rows = sptest.query(db0, "SELECT ID FROM information_schema.PROCESSLIST"
                                         " WHERE INFO LIKE %s AND ID <> CONNECTION_ID()", (f"%{marker}%",))
                return rows[0][0] if rows else None
            return sptest.wait_until(find, 10, what=f"backend statement with {marker}")
        finally:
            db0.close()

    def test_killed_backend_connection_mid_query(self):
        bystander = sptest.proxy()
        victim = sptest.proxy(read_timeout=30)
        try:
            self.assertEqual(sptest.scalar(bystander, "SELECT 1"), 1)
            marker = f"it_kill_{uuid.uuid4().hex[:8]}"
            outcome, thread = run_in_thread(lambda: sptest.query(victim, f"SELECT SLEEP(5), '{marker}'"))
            backend_id = self.backend_connection_running(marker)
            killer = sptest.direct(sptest.DB0_PORT)
            try:
                sptest.query(killer, f"KILL CONNECTION {backend_id}")
            finally:
                killer.close()
            thread.join(30)
            self.assertFalse(thread.is_alive(), "the client was never answered")
            self.assertIn("error", outcome, f"expected an error, got {outcome.get('result')!r}")
            self.assertIsInstance(outcome["error"], pymysql.err.MySQLError)
            # Everyone else is still served, old sessions and new ones.
            self.assertEqual(sptest.scalar(bystander, "SELECT 2"), 2)
            fresh = sptest.proxy()
            try:
                self.assertEqual(sptest.scalar(fresh, "SELECT 3"), 3)
            finally:
                fresh.close()
        finally:
            victim.close()
            bystander.close()

    def test_backend_server_stopped_mid_query_then_restarted(self):
        port = str(sptest.DB0_PORT)
        # Warm the pools: several backend connections sit idle when db0 goes away.
        self.assertEqual(self.concurrent_selects(8, "SELECT SLEEP(0.3)"), [])
        victim = sptest.proxy(read_timeout=60)
        try:
            marker = f"it_stop_{uuid.uuid4().hex[:8]}"
            outcome, thread = run_in_thread(lambda: sptest.query(victim, f"SELECT SLEEP(20), '{marker}'"))
            self.backend_connection_running(marker)
            sptest.cluster("down", "--ports", port)
            thread.join(60)
            self.assertFalse(thread.is_alive(), "the client was never answered")
            self.assertIn("error", outcome, f"expected an error, got {outcome.get('result')!r}")
            self.assertIsInstance(outcome["error"], pymysql.err.MySQLError)
        finally:
            victim.close()
            sptest.cluster("up", "--ports", port)

        # With db0 back, new sessions work again (the proxy reconnects by itself).
        def works():
            conn = sptest.proxy(connect_timeout=5, read_timeout=10)
            try:
                return sptest.scalar(conn, "SELECT 5") == 5
            finally:
                conn.close()
        started = time.monotonic()
        sptest.wait_until(works, 30, interval_s=0.5, what="a working session after db0 restart")
        print(f"recovered {time.monotonic() - started:.1f}s after db0 restart")
        # From then on every new session works at its first statement: the
        # connections that died with the old server are not handed out again.
        self.assertEqual(self.concurrent_selects(8, "SELECT 6"), [])
        for _ in range(8):
            self.assertTrue(works())

    def concurrent_selects(self, sessions, sql):
        """Runs sql in that many fresh sessions at once; returns the errors."""
        errors = []

        def one():
            try:
                conn = sptest.proxy(read_timeout=30)
                try:
                    sptest.query(conn, sql)
                finally:
                    conn.close()
            except Exception as e:  # noqa: BLE001 - collected
                errors.append(repr(e))

        threads = [threading.Thread(target=one) for _ in range(sessions)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        return errors


if __name__ == "__main__":
    unittest.main()
