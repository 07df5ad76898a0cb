"""A backend that refuses a connection for lack of connections is full, not down (issue 29, part 7).

The proxy's backend account here may hold two connections at once
(MAX_USER_CONNECTIONS 2, created on the cluster's first server as root). Two
sessions pin one connection each (an open transaction); a third session's
statement needs a third connection, which the server refuses with 1203. The
proxy must not mark the backend down for that: the statement waits for one of
the pool's own connections and runs when a transaction ends, and every other
session keeps working. Its own proxy (free ports), the account dropped at the end.
"""
import os
import re
import signal
import subprocess
import threading
import time
import unittest

import pymysql

from free_ports import free_ports

HOST = "127.0.0.1"
DB0_PORT = int(os.environ.get("SP_DB0_PORT", "3307"))
CONFIG = os.environ["SP_BACKEND_FULL_CONFIG"]
BINARY = os.environ["SP_PROXY_BINARY"]
RUN_DIR = os.environ["SP_BACKEND_FULL_RUN_DIR"]
ACCOUNT, PASSWORD = "sp_limited", "sp_limited_pw"


def direct_root():
    return pymysql.connect(host=HOST, port=DB0_PORT, user="root", password="root_pw", autocommit=True,
                           connect_timeout=10)


def run(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


class BackendFull(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(RUN_DIR, exist_ok=True)
        with direct_root() as d:
            run(d, f"DROP USER IF EXISTS '{ACCOUNT}'@'127.0.0.1'")
            run(d, f"CREATE USER '{ACCOUNT}'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}' WITH MAX_USER_CONNECTIONS 2")
            run(d, f"GRANT ALL ON im.* TO '{ACCOUNT}'@'127.0.0.1'")
        cls.port, admin_port = free_ports(2)
        with open(CONFIG, encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r"listen: 127\.0\.0\.1:\d+", f"listen: 127.0.0.1:{cls.port}", text, count=1)
        text = re.sub(r"admin_listen: 127\.0\.0\.1:\d+", f"admin_listen: 127.0.0.1:{admin_port}", text, count=1)
        text = re.sub(r"cache: .*", f"cache: {RUN_DIR}/shardmap.sqlite", text)
        text = text.replace("    user: proxy\n    password: proxy_pw\n", f"    user: {ACCOUNT}\n    password: {PASSWORD}\n")
        text = re.sub(r"    max_connections: 64\n", "    max_connections: 8\n", text)
        if ACCOUNT not in text:
            raise SystemExit("could not point the test proxy's backends at the limited account: config layout changed")
        # One worker thread: its pool is the one that meets the limit.
        text, n = re.subn(r"\n  threads: \d+\n", "\n  threads: 1\n", text, count=1)
        if n != 1:
            raise SystemExit("could not set the test proxy's threads: config layout changed")
        config = os.path.join(RUN_DIR, "shardproxy.yaml")
        with open(config, "w", encoding="utf-8") as f:
            f.write(text)
        cls.log = open(os.path.join(RUN_DIR, "shardproxy.log"), "w")
        cls.proc = subprocess.Popen([BINARY, "--config", config], stdout=cls.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while True:
            try:
                cls.connect().close()
                break
            except pymysql.err.MySQLError:
                if time.time() > deadline or cls.proc.poll() is not None:
                    raise SystemExit("the test proxy did not start; see " + cls.log.name)
                time.sleep(0.2)

    @classmethod
    def tearDownClass(cls):
        cls.proc.send_signal(signal.SIGTERM)
        cls.proc.wait(timeout=20)
        cls.log.close()
        with direct_root() as d:
            run(d, f"DROP USER IF EXISTS '{ACCOUNT}'@'127.0.0.1'")

    @classmethod
    def connect(cls):
        return pymysql.connect(host=HOST, port=cls.port, user="app", password="app_pw", database="im",
                               autocommit=True, connect_timeout=10, read_timeout=60)

    def test_a_full_server_makes_statements_wait_not_fail(self):
        holders = [self.connect(), self.connect()]
        waiter = self.connect()
        try:
            for h in holders:
                run(h, "BEGIN")
                run(h, "SELECT 1")
            # Both connections the account may have are pinned. The third
            # session's statement is refused a connection by the server (1203).
            result = {}

            def third():
                try:
                    result["rows"] = run(waiter, "SELECT 42")
                except pymysql.err.MySQLError as e:
                    result["error"] = e.args
            t = threading.Thread(target=third)
            t.start()
            time.sleep(1.0)
            self.assertNotIn("error", result, "the statement failed instead of waiting for a connection")
            run(holders[0], "COMMIT")  # gives one connection back to the pool
            t.join(timeout=30)
            self.assertFalse(t.is_alive())
            self.assertNotIn("error", result)
            self.assertEqual(result.get("rows"), ((42,),))
            # Not marked down: the other sessions go on at once.
            self.assertEqual(run(holders[0], "SELECT 7"), ((7,),))
            run(holders[1], "COMMIT")
            self.assertEqual(run(holders[1], "SELECT 8"), ((8,),))
        finally:
            for c in holders + [waiter]:
                c.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
