"""Helpers of the tests that run a replication group of their own
(replica_reads_test.py, switchover_test.py, fleet_failover_test.py): scripts/cluster in the test's
own directory, root connections to a server, and a bounded wait."""
import os
import re
import subprocess
import threading
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


def missing_writes(acked, port):
    """The acknowledged (writer, n) rows of the role-change loads that the server on `port` lacks."""
    with root(port) as c:
        present = set(rows(c, "SELECT writer, n FROM im.ha_rows"))
    return [a for a in acked if a not in present]


def admin_rows(port, sql):
    """One admin command on a proxy's admin port: its rows as dicts."""
    with pymysql.connect(host=HOST, port=port, user="admin", password="admin_pw", connect_timeout=10,
                         read_timeout=60) as a:
        with a.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute(sql)
            return cur.fetchall()


class Workers:
    """Client threads that run a statement loop each until stopped, as the
    load of a role change: each on a connection of its own, reopened 50 ms
    after an error; errors are collected (the test asserts on them), never
    raised. Subclasses add their threads to `threads`; `with` starts and
    stops them."""

    def __init__(self):
        self.stop = threading.Event()
        self.errors = []
        self.lock = threading.Lock()
        self.threads = []

    def loop(self, connect, step, label):
        """step(conn, i, started) for i = 1, 2, ... until stopped (`started`:
        time.time() before the statement, and before its reconnection when it
        needed one); a failed one is recorded as "<label(i)>: <error>"."""
        conn, i = None, 0
        while not self.stop.is_set():
            i += 1
            started = time.time()
            try:
                if conn is None:
                    conn = connect()
                step(conn, i, started)
            except pymysql.err.MySQLError as e:
                with self.lock:
                    self.errors.append(f"{label(i)}: {e}")
                if conn is not None:
                    conn.close()
                conn = None
                time.sleep(0.05)
        if conn is not None:
            conn.close()

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)


def group_backends(primary, r1, r2, max_connections):
    """The `backends:` section of a test proxy's config for its own group: db0
    on `primary` with replicas r1 and r2, the test accounts, default db0."""
    return (f"backends:\n"
            f"  - name: db0\n"
            f"    address: 127.0.0.1:{primary}\n"
            f"    user: proxy\n"
            f"    password: proxy_pw\n"
            f"    replication_user: proxy_repl\n"
            f"    replication_password: proxy_repl_pw\n"
            f"    database: im\n"
            f"    max_connections: {max_connections}\n"
            f"    replicas:\n"
            f"      - {{name: r1, address: 127.0.0.1:{r1}}}\n"
            f"      - {{name: r2, address: 127.0.0.1:{r2}}}\n"
            f"default_backend: db0\n")


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


def prepare_group(primary, replica_ports, ports_by_name):
    """Creates im.ha_rows (writer, n unique) on the primary, waits until every
    replica has it, and returns each server's server_id by name."""
    with root(primary) as p:
        rows(p, "DROP TABLE IF EXISTS im.ha_rows")
        rows(p, "CREATE TABLE im.ha_rows (id BIGINT AUTO_INCREMENT PRIMARY KEY, writer INT, n INT, "
                "UNIQUE KEY (writer, n))")
        gtid = scalar(p, "SELECT @@gtid_current_pos")
    for port in replica_ports:
        with root(port) as c:
            if scalar(c, "SELECT MASTER_GTID_WAIT(%s, 30)", (gtid,)) != 0:
                raise SystemExit(f"replica {port} did not catch up with {gtid}")
    server_ids = {}
    for name, port in ports_by_name.items():
        with root(port) as c:
            server_ids[name] = int(scalar(c, "SELECT @@server_id"))
    return server_ids


def transactions_after(ports, server_id, position):
    """Transactions written with `server_id` past `position` (its domain's
    sequence number), in the binary log of every server of `ports` that
    answers: [(port, event info)]."""
    seq = int(re.search(r"0-\d+-(\d+)", position).group(1))
    found = []
    for port in ports:
        try:
            c = root(port)
        except pymysql.err.MySQLError:
            continue
        with c:
            for (log_name, *_rest) in rows(c, "SHOW BINARY LOGS"):
                for event in rows(c, f"SHOW BINLOG EVENTS IN '{log_name}'"):
                    # (Log_name, Pos, Event_type, Server_id, End_log_pos, Info)
                    if event[2] != "Gtid" or event[3] != server_id:
                        continue
                    m = re.search(r"GTID 0-(\d+)-(\d+)", event[5])
                    if m and int(m.group(2)) > seq:
                        found.append((port, event[5]))
    return found
