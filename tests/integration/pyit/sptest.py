"""Shared helpers for the integration tests (run by ctest from tests/integration).

Ports and paths come from the environment ctest sets (tests/integration/CMakeLists.txt);
the defaults match scripts/cluster and the generated test config, so a test module
can also be run by hand:  cd tests/integration && /usr/bin/python3 -m unittest -v pyit.test_queries
"""
import os
import subprocess
import time
import uuid

import pymysql

HOST = os.environ.get("SP_PROXY_HOST", "127.0.0.1")
PROXY_PORT = int(os.environ.get("SP_PROXY_PORT", "16033"))
DB0_PORT = int(os.environ.get("SP_DB0_PORT", "3307"))
DB1_PORT = int(os.environ.get("SP_DB1_PORT", "3308"))
REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CLUSTER = os.environ.get("SP_CLUSTER", os.path.join(REPO_ROOT, "scripts", "cluster"))
PROXY_LOG = os.environ.get("SP_PROXY_LOG", "")

APP_USER, APP_PASSWORD, DATABASE = "app", "app_pw", "im"
BACKEND_USER, BACKEND_PASSWORD = "proxy", "proxy_pw"
# The proxy's backend account has the least-privilege grants of
# docs/security.md (rows and DDL of `im` only); what needs more (scratch
# databases, grants, SET GLOBAL) runs as root over TCP (scripts/cluster).
ROOT_USER, ROOT_PASSWORD = "root", "root_pw"
BACKEND_ACCOUNTS = ("'proxy'@'127.0.0.1'", "'proxy'@'%'", "'proxy'@'localhost'")


def proxy(user=APP_USER, password=APP_PASSWORD, database=DATABASE, autocommit=True, **kwargs):
    """A PyMySQL connection through the proxy.

    autocommit=True by default: PyMySQL otherwise sends SET AUTOCOMMIT=0 on connect,
    which would put every test session in a transaction.
    """
    kwargs.setdefault("connect_timeout", 10)
    kwargs.setdefault("read_timeout", 60)
    kwargs.setdefault("write_timeout", 60)
    return pymysql.connect(host=HOST, port=PROXY_PORT, user=user, password=password,
                           database=database, charset="utf8mb4", autocommit=autocommit, **kwargs)


def direct(port=None, database=DATABASE, **kwargs):
    """A PyMySQL connection straight to a backend (default db0), bypassing the proxy."""
    kwargs.setdefault("connect_timeout", 10)
    kwargs.setdefault("read_timeout", 60)
    return pymysql.connect(host="127.0.0.1", port=port or DB0_PORT, user=BACKEND_USER,
                           password=BACKEND_PASSWORD, database=database, charset="utf8mb4",
                           autocommit=True, **kwargs)


def root(port=None, database=None, **kwargs):
    """A PyMySQL connection to a backend as root (scratch databases, grants)."""
    kwargs.setdefault("connect_timeout", 10)
    kwargs.setdefault("read_timeout", 60)
    return pymysql.connect(host="127.0.0.1", port=port or DB0_PORT, user=ROOT_USER, password=ROOT_PASSWORD,
                           database=database, charset="utf8mb4", autocommit=True, **kwargs)


def grant_backend_account(conn, database, privileges="ALL PRIVILEGES"):
    """Lets the proxy's backend account use a scratch database (as a DBA would)."""
    for account in BACKEND_ACCOUNTS:
        query(conn, f"GRANT {privileges} ON `{database}`.* TO {account}")


def revoke_backend_account(conn, database):
    for account in BACKEND_ACCOUNTS:
        try:
            query(conn, f"REVOKE ALL PRIVILEGES ON `{database}`.* FROM {account}")
        except pymysql.err.MySQLError:
            pass  # never granted


def query(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall()


def scalar(conn, sql, args=None):
    rows = query(conn, sql, args)
    assert len(rows) == 1 and len(rows[0]) == 1, f"expected one value from {sql!r}, got {rows!r}"
    return rows[0][0]


def unique_name(prefix):
    """A table/database name no other run or test uses (tests share the backends)."""
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def cluster(*args, timeout=180):
    """Runs scripts/cluster; raises with its output when it fails."""
    result = subprocess.run([CLUSTER, *args], capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"scripts/cluster {' '.join(args)} failed ({result.returncode}):\n"
                           f"{result.stdout}\n{result.stderr}")
    return result.stdout


def wait_until(predicate, timeout_s, interval_s=0.2, what="condition"):
    """Polls predicate() until it returns a truthy value; the last exception is re-raised."""
    deadline = time.monotonic() + timeout_s
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as e:  # noqa: BLE001 - the caller decides what failure means
            last_error = e
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}; last error: {last_error!r}")


def capture_sqlstate(fn):
    """Calls fn() expecting a MySQL error; returns (errno, sqlstate, message).

    PyMySQL drops the SQLSTATE of ERR packets, so the packet parser is wrapped
    for the duration of the call to record it.
    """
    import pymysql.err as err

    seen = {}
    original = err.raise_mysql_exception

    def recording(data):
        if len(data) >= 9 and data[3:4] == b"#":
            seen["sqlstate"] = data[4:9].decode("ascii", "replace")
        original(data)

    err.raise_mysql_exception = recording
    try:
        fn()
    except pymysql.err.MySQLError as e:
        code = e.args[0] if e.args else None
        message = e.args[1] if len(e.args) > 1 else ""
        return code, seen.get("sqlstate"), message
    finally:
        err.raise_mysql_exception = original
    raise AssertionError("expected a MySQL error, but the call succeeded")
