"""Helpers for the scatter-failure and split-insert integration tests
(scatter_failure_test.py, split_insert_test.py).

Each test class starts its OWN shardproxy (two free ports picked at start) with a
scratch config and shard map under SP_SCATTER_IT_DIR, because the tests need their
own `scatter:` settings (multi_shard_writes, shard_timeout_ms, max_merge_bytes).
The backends are the shared test cluster (scripts/cluster, ports SP_DB0_PORT and
SP_DB1_PORT, directory SP_CLUSTER_DIR). The sharded table has a name unique to
the run: <prefix>_<hex>, key conv_id, method mod, 16 shards <name>_00.._15,
shards 0-7 on db0 and 8-15 on db1, scatter: allow. Physical shard N starts its
AUTO_INCREMENT id at N*1000+1, so insert ids tell the shards apart.
"""
import os
import shutil
import signal
import subprocess
import time
import uuid

import pymysql

from free_ports import free_ports

HOST = "127.0.0.1"
DB0_PORT = int(os.environ.get("SP_DB0_PORT", "3307"))
DB1_PORT = int(os.environ.get("SP_DB1_PORT", "3308"))
HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BINARY = os.environ.get("SP_PROXY_BINARY", os.path.join(REPO_ROOT, "build", "proxy", "shardproxy"))
RUN_ROOT = os.environ.get("SP_SCATTER_IT_DIR", os.path.join(REPO_ROOT, "build", "tests", "integration", "scatter-run"))
CLUSTER = os.path.join(REPO_ROOT, "scripts", "cluster")
CLUSTER_DIR = os.environ.get("SP_CLUSTER_DIR", os.path.join(REPO_ROOT, ".cluster"))
SHARDS = 16
APP_USER, APP_PASSWORD = "app", "app_pw"
DDL = ("CREATE TABLE {} (conv_id BIGINT UNSIGNED NOT NULL, seq INT NOT NULL, body VARCHAR(600) NOT NULL DEFAULT '', "
       "id BIGINT NOT NULL AUTO_INCREMENT, PRIMARY KEY (conv_id, seq), UNIQUE KEY (id)) "
       "ENGINE=InnoDB AUTO_INCREMENT={}")


def backend_port(shard):
    return DB0_PORT if shard < 8 else DB1_PORT


def direct(port, **kw):
    kw.setdefault("connect_timeout", 10)
    kw.setdefault("read_timeout", 60)
    return pymysql.connect(host=HOST, port=port, user="proxy", password="proxy_pw", database="im",
                           autocommit=True, **kw)


def rows(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall()


def error_of(fn):
    """Calls fn() expecting a MySQL error; returns (errno, message)."""
    try:
        fn()
    except pymysql.err.MySQLError as e:
        return (e.args[0] if e.args else None), (e.args[1] if len(e.args) > 1 else str(e))
    raise AssertionError("expected a MySQL error, but the call succeeded")


class ShardedTable:
    """The run's sharded table: physical tables created and dropped directly on the backends."""

    def __init__(self, prefix):
        self.name = f"{prefix}_{uuid.uuid4().hex[:8]}"

    def physical(self, shard):
        return f"{self.name}_{shard:02d}"

    def create(self):
        for port in (DB0_PORT, DB1_PORT):
            conn = direct(port)
            try:
                for shard in range(SHARDS):
                    if backend_port(shard) == port:
                        rows(conn, DDL.format(self.physical(shard), shard * 1000 + 1))
            finally:
                conn.close()

    def drop(self):
        for port in (DB0_PORT, DB1_PORT):
            try:
                conn = direct(port)
            except pymysql.err.MySQLError:
                continue  # a test left the server down: nothing to drop there
            try:
                for shard in range(SHARDS):
                    if backend_port(shard) == port:
                        rows(conn, f"DROP TABLE IF EXISTS {self.physical(shard)}")
            finally:
                conn.close()

    def direct_rows(self, shard, columns="conv_id, seq, body"):
        conn = direct(backend_port(shard))
        try:
            return rows(conn, f"SELECT {columns} FROM {self.physical(shard)} ORDER BY conv_id, seq")
        finally:
            conn.close()

    def map_text(self):
        return (f"# written by tests/integration/scatter_failure_proxy.py\n"
                f"version: 1\n"
                f"tables:\n"
                f"  {self.name}:\n"
                f"    key: conv_id\n"
                f"    method: mod\n"
                f"    shards: {SHARDS}\n"
                f"    table: \"{self.name}_{{shard:02}}\"\n"
                f"    backends: {{db0: \"0-7\", db1: \"8-15\"}}\n"
                f"    scatter: allow\n")


class ProxyRun:
    """A shardproxy process with its own scratch directory, config and shard map."""

    def __init__(self, name, table, scatter, max_connections=32, server_extra="", sections="", backend_extra=""):
        self.dir = os.path.join(RUN_ROOT, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.port, self.admin_port = free_ports(2)
        self.log_path = os.path.join(self.dir, "shardproxy.log")
        self.config_path = os.path.join(self.dir, "shardproxy.yaml")
        with open(os.path.join(self.dir, "map.yaml"), "w") as f:
            f.write(table.map_text())
        scatter_lines = "".join(f"  {k}: {v}\n" for k, v in scatter.items())
        with open(self.config_path, "w") as f:
            f.write(f"""server:
  listen: {HOST}:{self.port}
  admin_listen: {HOST}:{self.admin_port}
  threads: 2
  shutdown_grace_ms: 2000
  log_level: debug
{server_extra}scatter:
{scatter_lines}{sections}users:
  - {{name: {APP_USER}, password: {APP_PASSWORD}, default_database: im}}
admin_users:
  - {{name: admin, password: admin_pw}}
backends:
  - {{name: db0, address: 127.0.0.1:{DB0_PORT}, user: proxy, password: proxy_pw, database: im, max_connections: {max_connections}, connect_timeout_ms: 2000{backend_extra}}}
  - {{name: db1, address: 127.0.0.1:{DB1_PORT}, user: proxy, password: proxy_pw, database: im, max_connections: {max_connections}, connect_timeout_ms: 2000{backend_extra}}}
shard_map: map.yaml
default_backend: db0
cache: cache/shardmap.sqlite
""")
        self.proc = None

    def start(self, timeout=20):
        # Ready means THIS process logged that it listens on our port: an open port
        # alone could belong to another process (see free_ports.py).
        ready_line = f"shardproxy listening on {HOST}:{self.port} "
        log_offset = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen([BINARY, "--config", self.config_path], stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while not self._logged_since(log_offset, ready_line):
            if self.proc.poll() is not None:
                raise RuntimeError(f"shardproxy exited ({self.proc.returncode}):\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"shardproxy did not listen within {timeout}s:\n{self.log_tail()}")
            time.sleep(0.1)

    def stop(self):
        if not self.proc:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        code, self.proc = self.proc.returncode, None
        return code

    def _logged_since(self, offset, text):
        with open(self.log_path, errors="replace") as f:
            f.seek(offset)
            return text in f.read()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines=40):
        with open(self.log_path, errors="replace") as f:
            return "\n".join(f.read().splitlines()[-lines:])

    def connect(self, autocommit=True, **kw):
        kw.setdefault("connect_timeout", 10)
        kw.setdefault("read_timeout", 60)
        return pymysql.connect(host=HOST, port=self.port, user=APP_USER, password=APP_PASSWORD, database="im",
                               autocommit=autocommit, **kw)


def kill_backend(port):
    """SIGKILL the mariadbd serving port (scripts/cluster's pid file); returns its pid."""
    with open(os.path.join(CLUSTER_DIR, str(port), "mysqld.pid")) as f:
        pid = int(f.read().strip())
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        time.sleep(0.05)
    raise AssertionError(f"mariadbd {pid} on port {port} survived SIGKILL")


def restart_backend(port):
    """scripts/cluster up for that port (crash recovery included); raises with its output on failure."""
    env = dict(os.environ, SP_CLUSTER_DIR=CLUSTER_DIR)
    result = subprocess.run([CLUSTER, "up", "--ports", str(port)], capture_output=True, text=True, timeout=180,
                            env=env)
    if result.returncode != 0:
        raise RuntimeError(f"scripts/cluster up --ports {port} failed ({result.returncode}):\n"
                           f"{result.stdout}\n{result.stderr}")
