"""Helpers for the shard-map lifecycle tests (admin_test.py, reload_load_test.py).

These tests start their OWN shardproxy (ports SP_ADMIN_IT_PORT / SP_ADMIN_IT_ADMIN_PORT,
by default two free ports picked at start, since other proxies may run on this machine) with a config, map file and SQLite cache in a scratch directory,
because they rewrite the map file, delete it, corrupt the cache and restart the proxy.
The backends are the shared test cluster (scripts/cluster, 3307/3308). The sharded
table is it_admin_chan (bucket method, 64 buckets, key_prefix "channel:"), physical
tables it_admin_chan_s01 on db0 and it_admin_chan_s02 on db1.
"""
import os
import shutil
import signal
import socket
import subprocess
import time
import zlib

import pymysql

from free_ports import free_ports

HOST = "127.0.0.1"


_PICKED = free_ports(2)
PORT = int(os.environ.get("SP_ADMIN_IT_PORT") or _PICKED[0])
ADMIN_PORT = int(os.environ.get("SP_ADMIN_IT_ADMIN_PORT") or _PICKED[1])
DB0_PORT = int(os.environ.get("SP_DB0_PORT", "3307"))
DB1_PORT = int(os.environ.get("SP_DB1_PORT", "3308"))
HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BINARY = os.environ.get("SP_PROXY_BINARY", os.path.join(REPO_ROOT, "build", "proxy", "shardproxy"))
RUN_ROOT = os.environ.get("SP_ADMIN_IT_DIR", os.path.join(REPO_ROOT, "build", "tests", "integration", "admin-run"))

ADMIN_USER, ADMIN_PASSWORD = "admin", "admin_pw"
APP_USER, APP_PASSWORD = "app", "app_pw"
TABLE = "it_admin_chan"
DDL = ("CREATE TABLE IF NOT EXISTS {} (peer_id BIGINT NOT NULL, msg_id BIGINT NOT NULL, "
       "body VARCHAR(64) NOT NULL DEFAULT '', PRIMARY KEY (peer_id, msg_id)) ENGINE=InnoDB")


def bucket_of(peer_id, buckets=64):
    return zlib.crc32(b"channel:%d" % peer_id) % buckets


def keys_in_bucket(bucket, count, start=1):
    keys, k = [], start
    while len(keys) < count:
        if bucket_of(k) == bucket:
            keys.append(k)
        k += 1
    return keys


def map_text(version, s01="0-31", s02="32-63", s02_backend="db1", hot_keys=None, extra=""):
    hot = "{}" if not hot_keys else "{" + ", ".join(f"{k}: {v}" for k, v in hot_keys.items()) + "}"
    return (f"# written by tests/integration/admin_proxy.py\n"
            f"version: {version}\n"
            f"tables:\n"
            f"  {TABLE}:\n"
            f"    key: peer_id\n"
            f"    method: bucket\n"
            f"    key_prefix: \"channel:\"\n"
            f"    buckets: 64\n"
            f"    table: \"{TABLE}_{{shard}}\"\n"
            f"    shards:\n"
            f"      s01: {{buckets: \"{s01}\", backend: db0}}\n"
            f"      s02: {{buckets: \"{s02}\", backend: {s02_backend}}}\n"
            f"    hot_keys: {hot}\n"
            f"{extra}")


def config_text(extra_backends=""):
    return f"""server:
  listen: {HOST}:{PORT}
  admin_listen: {HOST}:{ADMIN_PORT}
  threads: 2
  max_connections: 1000
  shutdown_grace_ms: 2000
  log_level: debug
users:
  - {{name: {APP_USER}, password: {APP_PASSWORD}, default_database: im}}
admin_users:
  - {{name: {ADMIN_USER}, password: {ADMIN_PASSWORD}}}
backends:
  - {{name: db0, address: 127.0.0.1:{DB0_PORT}, user: proxy, password: proxy_pw, database: im, max_connections: 32}}
  - {{name: db1, address: 127.0.0.1:{DB1_PORT}, user: proxy, password: proxy_pw, database: im, max_connections: 32}}
{extra_backends}shard_map: map.yaml
default_backend: db0
cache: cache/shardmap.sqlite
"""


def direct(port, **kw):
    return pymysql.connect(host=HOST, port=port, user="proxy", password="proxy_pw", database="im",
                           autocommit=True, connect_timeout=10, read_timeout=60, **kw)


def root(port, **kw):
    """As root (scripts/cluster): scratch databases such as a mirror need more than the
    proxy account's least-privilege grants (docs/security.md)."""
    return pymysql.connect(host=HOST, port=port, user="root", password="root_pw", database="im",
                           autocommit=True, connect_timeout=10, read_timeout=60, **kw)


def port_open(port):
    try:
        with socket.create_connection((HOST, port), timeout=0.5):
            return True
    except OSError:
        return False


class ProxyRun:
    """A shardproxy process with its own scratch directory."""

    def __init__(self, name):
        self.dir = os.path.join(RUN_ROOT, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.config_path = os.path.join(self.dir, "shardproxy.yaml")
        self.map_path = os.path.join(self.dir, "map.yaml")
        self.cache_path = os.path.join(self.dir, "cache", "shardmap.sqlite")
        self.log_path = os.path.join(self.dir, "shardproxy.log")
        self.proc = None
        self.write_config()

    def write_config(self, extra_backends=""):
        with open(self.config_path, "w") as f:
            f.write(config_text(extra_backends))

    def write_map(self, text):
        # Write then rename, as an operator's editor or deploy tool would: never a half-written file.
        tmp = self.map_path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.map_path)

    def start(self, timeout=20):
        for port in (PORT, ADMIN_PORT):
            if port_open(port):
                raise RuntimeError(f"port {port} is already in use")
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen([BINARY, "--config", self.config_path, "--log-level", "debug"],
                                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while not (port_open(PORT) and port_open(ADMIN_PORT)):
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

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def hangup(self):
        self.proc.send_signal(signal.SIGHUP)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def log_tail(self, lines=40):
        return "\n".join(self.log().splitlines()[-lines:])


def admin(user=ADMIN_USER, password=ADMIN_PASSWORD, **kw):
    kw.setdefault("connect_timeout", 10)
    kw.setdefault("read_timeout", 60)
    return pymysql.connect(host=HOST, port=ADMIN_PORT, user=user, password=password, **kw)


def app(**kw):
    kw.setdefault("connect_timeout", 10)
    kw.setdefault("read_timeout", 60)
    return pymysql.connect(host=HOST, port=PORT, user=APP_USER, password=APP_PASSWORD, database="im",
                           autocommit=True, **kw)


def rows(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall()


def dict_rows(conn, sql):
    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute(sql)
        return cur.fetchall()


def cli(sql, port=ADMIN_PORT, user=ADMIN_USER, password=ADMIN_PASSWORD, extra=()):
    """The mariadb CLI, as an operator runs it; returns (exit code, stdout, stderr)."""
    r = subprocess.run(["mariadb", "--no-defaults", "-h", HOST, "-P", str(port), f"-u{user}", f"-p{password}",
                        "--batch", *extra, "-e", sql], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def route_backend(conn, peer_id):
    """(shard, backend) that EXPLAIN SHARDS on the client port gives for a point SELECT."""
    r = rows(conn, f"EXPLAIN SHARDS SELECT * FROM {TABLE} WHERE peer_id = {peer_id}")
    assert len(r) == 1, r
    return r[0][0], r[0][1]


def create_tables():
    """Fresh it_admin_chan_s01 on db0 and it_admin_chan_s02 on db1."""
    drop_tables()
    for port, shard in ((DB0_PORT, "s01"), (DB1_PORT, "s02")):
        c = direct(port)
        rows(c, DDL.format(f"{TABLE}_{shard}"))
        c.close()


def drop_tables():
    for port in (DB0_PORT, DB1_PORT):
        c = direct(port)
        for shard in ("s01", "s02"):
            rows(c, f"DROP TABLE IF EXISTS {TABLE}_{shard}")
        c.close()
