"""Helpers of the tests that run a replication group of their own
(replica_reads_test.py, switchover_test.py): scripts/cluster in the test's
own directory, root connections to a server, and a bounded wait."""
import os
import subprocess
import time

import pymysql

HOST = "127.0.0.1"
ROOT_PASSWORD = "root_pw"


def cluster(repo, cluster_dir, *args, timeout=240):
    """scripts/cluster <command> --dir <cluster_dir> <args...>; its output, or
    the run fails (a server that cannot start is never skipped)."""
    command = [os.path.join(repo, "scripts", "cluster"), args[0], "--dir", cluster_dir] + list(args[1:])
    r = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit(f"scripts/cluster {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r.stdout


def root(port):
    return pymysql.connect(host=HOST, port=port, user="root", password=ROOT_PASSWORD, autocommit=True,
                           connect_timeout=10, read_timeout=60)


def rows(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall()


def scalar(conn, sql, args=None):
    r = rows(conn, sql, args)
    return r[0][0] if r else None


def wait_until(what, predicate, timeout=30.0, retry_errors=False):
    """Polls `predicate` every 50 ms until it is true or `timeout` passes.
    `retry_errors`: an exception counts as not yet (a server restarting)."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            if predicate():
                return
        except Exception as e:  # noqa: BLE001 - only with retry_errors
            if not retry_errors:
                raise
            last = e
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}" + (f" (last error: {last})" if last else ""))
