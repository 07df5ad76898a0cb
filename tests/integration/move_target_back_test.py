"""A failed move's partial copy is removed once its target is back (issue 29, part 7).

A key of it_move_chan moves from s01 (db0) to s03 (db1) with a slow copy; db1's
mariadbd is SIGKILLed (scripts/cluster kill) during the copy, so the move
fails and cannot delete the rows it copied. Then:

  * SHOW MOVES says the move failed and its target cleanup is pending, also
    after the proxy is killed and started again (the SQLite file keeps it);
  * db1 is started again (scripts/cluster restart): within BACK_BOUND_S the
    cleanup is done (SHOW MOVES target_cleanup "done <time>"), the moving key's
    rows are gone from it_move_chan_s03 while the rows of a key the map routes
    to s03 are all there, and routing never left s01.

Prints the time from db1 accepting connections again to the cleanup done.
db1 is running again at the end, whatever happened.
"""
import os
import subprocess
import time
import unittest

import admin_proxy as ap
from admin_proxy import DB0_PORT, DB1_PORT, rows
from move_test import CHAN, MONTHS, MoveProxy, bucket_of, create_tables, keys_where

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MOVING_ROWS, OWN_ROWS = 400, 30
BACK_BOUND_S = 20.0
# A slow copy (20 rows every 150 ms: 3 s for the key) and probes that call a
# dead server down within about a second.
SETTINGS = """moves: {batch_rows: 20, pause_ms: 150}
ha:
  check_interval_ms: 300
  probe_timeout_ms: 500
  failure_timeout_ms: 1000
"""


def cluster_dir(port):
    """The scripts/cluster directory of the server on `port` (<dir>/<port>/data)."""
    with ap.root(port) as c:
        datadir = rows(c, "SELECT @@datadir")[0][0]
    return os.path.dirname(os.path.dirname(datadir.rstrip("/")))


def cluster(directory, *args):
    result = subprocess.run([os.path.join(REPO, "scripts", "cluster"), *args[:1], "--dir", directory, *args[1:]],
                            capture_output=True, text=True, timeout=180)
    if result.returncode != 0:
        raise RuntimeError(f"scripts/cluster {' '.join(args)}: {result.returncode}\n{result.stdout}\n{result.stderr}")


def answers(port):
    try:
        ap.direct(port).close()
        return True
    except Exception:
        return False


def move_row(admin, move):
    return next(r for r in ap.dict_rows(admin, "SHOW MOVES") if int(r["id"]) == move)


def insert(key, count):
    app = ap.app()
    for i in range(1, count + 1):
        rows(app, f"INSERT INTO {CHAN} (peer_id, message_id, message_month, message_time, ingested_at) "
                  f"VALUES (%s, %s, %s, %s, %s)", (key, i, MONTHS[0], MONTHS[0] + " 01:00:00", "2024-12-01"))
    app.close()


class MoveTargetBack(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = cluster_dir(DB1_PORT)
        create_tables()
        cls.proxy = MoveProxy("move_target_back", SETTINGS)
        cls.proxy.start()
        cls.moving = keys_where(lambda k: bucket_of(k) == 20, 1)[0]   # s01, db0
        cls.own = keys_where(lambda k: bucket_of(k) == 50, 1)[0]      # s03, db1: stays there
        insert(cls.moving, MOVING_ROWS)
        insert(cls.own, OWN_ROWS)

    @classmethod
    def tearDownClass(cls):
        if not answers(DB1_PORT):  # never leave the shared server down
            cluster(cls.dir, "restart", str(DB1_PORT))
        cls.proxy.stop()

    def count_on_target(self, key):
        with ap.direct(DB1_PORT) as c:
            return rows(c, f"SELECT COUNT(*) FROM {CHAN}_s03 WHERE peer_id = %s", (key,))[0][0]

    def test_partial_copy_removed_when_the_target_is_back(self):
        admin = ap.admin(autocommit=True)
        move = int(ap.dict_rows(admin, f"MOVE KEY {self.moving} OF {CHAN} TO s03")[0]["id"])
        deadline = time.monotonic() + 20
        while int(move_row(admin, move)["rows_copied"]) < 60:
            self.assertLess(time.monotonic(), deadline, move_row(admin, move))
            time.sleep(0.05)
        copied_before_kill = self.count_on_target(self.moving)
        self.assertGreater(copied_before_kill, 0)
        cluster(self.dir, "kill", str(DB1_PORT))

        deadline = time.monotonic() + 30
        while (row := move_row(admin, move))["state"] != "failed":
            self.assertNotIn(row["state"], ("switched", "verified", "cancelled"), row)
            self.assertLess(time.monotonic(), deadline, row)
            time.sleep(0.2)
        self.assertTrue(row["target_cleanup"].startswith("pending"), row)
        self.assertIn("not deleted", row["message"])
        admin.close()

        # The pending cleanup is in the SQLite file: a proxy killed and started again still has it.
        self.proxy.proc.kill()
        self.proxy.proc.wait()
        self.proxy.proc = None
        self.proxy.start()
        admin = ap.admin(autocommit=True)
        time.sleep(1.0)  # a few sweeps against the dead target
        row = move_row(admin, move)
        self.assertEqual(row["state"], "failed", row)
        self.assertTrue(row["target_cleanup"].startswith("pending"), row)

        # Timed from db1's first accepted connection (scripts/cluster restart returns later, once the
        # server is fully ready).
        restart = subprocess.Popen([os.path.join(REPO, "scripts", "cluster"), "restart", "--dir", self.dir,
                                    str(DB1_PORT)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 120
        while not answers(DB1_PORT):
            self.assertLess(time.monotonic(), deadline, "db1 did not come back")
            time.sleep(0.02)
        back = time.monotonic()
        while not (row := move_row(admin, move))["target_cleanup"].startswith("done"):
            self.assertLess(time.monotonic() - back, BACK_BOUND_S, row)
            time.sleep(0.05)
        done_after = time.monotonic() - back
        self.assertEqual(restart.wait(timeout=180), 0, restart.stdout.read())
        admin.close()
        print(f"\ntarget back (db1 accepts connections) -> target cleanup done: {done_after:.2f} s "
              f"({copied_before_kill}+ rows copied before the kill); SHOW MOVES: {row['target_cleanup']!r}, "
              f"message {row['message']!r}")
        self.assertNotIn("not deleted", row["message"])
        self.assertEqual(self.count_on_target(self.moving), 0)
        self.assertEqual(self.count_on_target(self.own), OWN_ROWS)
        with ap.direct(DB0_PORT) as c:
            self.assertEqual(rows(c, f"SELECT COUNT(*) FROM {CHAN}_s01 WHERE peer_id = %s", (self.moving,))[0][0],
                             MOVING_ROWS)
        app = ap.app()
        r = rows(app, f"EXPLAIN SHARDS SELECT * FROM {CHAN} WHERE peer_id = {self.moving} "
                      f"AND message_month = '{MONTHS[0]}'")
        app.close()
        self.assertEqual((r[0][0], r[0][1]), ("s01", "db0"))


if __name__ == "__main__":
    unittest.main()
