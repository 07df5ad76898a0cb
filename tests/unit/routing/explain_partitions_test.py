#!/usr/bin/python3
"""Integration: the month predicate the planner adds makes MariaDB prune partitions.

Starts a throwaway two-server cluster (scripts/cluster, own dir and ports),
creates the schema with scripts/schema, plans tg_channel_message queries with
routing_plan and checks EXPLAIN PARTITIONS of the rewritten SQL on the chosen
backend: only the months of the bounds are read. Also checks that the same
query without the added predicate reads every partition (so the check has
teeth), and that rows inserted through the plans land where Python's zlib
predicts.

  explain_partitions_test.py ROUTING_PLAN_BINARY
Environment: SP_ROUTING_IT_PORTS (default 3517,3518; 3497 is a replica of integration.fleet_failover, which may run beside it), SP_ROUTING_IT_DIR.
"""
import os
import subprocess
import sys
import tempfile
import zlib

import pymysql

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PORTS = os.environ.get("SP_ROUTING_IT_PORTS", "3517,3518").split(",")
CLUSTER_DIR = os.environ.get("SP_ROUTING_IT_DIR", os.path.join(tempfile.gettempdir(), "sp-routing-it"))
SHARD_MAP = os.path.join(REPO, "conf", "shard_map.yaml")

CASES = [
    # (query, expected partitions)
    ("SELECT * FROM tg_channel_message WHERE peer_id = 1 AND message_time >= '2025-01-01 00:00:00' "
     "AND message_time < '2025-04-01 00:00:00'", "p202501,p202502,p202503"),
    ("SELECT COUNT(*) FROM tg_channel_message WHERE peer_id = 7 AND message_time >= '2025-03-15' "
     "AND message_time <= '2025-03-31 23:59:59'", "p202503"),
    ("SELECT * FROM tg_channel_message t WHERE t.peer_id = 42 AND t.message_time BETWEEN '2024-11-10' "
     "AND '2025-02-01 00:00:00' ORDER BY t.message_time DESC LIMIT 10", "p202411,p202412,p202501,p202502"),
    ("SELECT * FROM tg_channel_message WHERE peer_id = 1001 AND message_month >= '2025-01-01' "
     "AND message_month < '2025-04-01' AND message_time >= '2025-01-01 00:00:00' "
     "AND message_time < '2025-04-01 00:00:00' ORDER BY message_time DESC, message_id DESC LIMIT 100",
     "p202501,p202502,p202503"),
]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def write_config(path):
    with open(path, "w") as f:
        f.write(f"""backends:
  - {{name: db0, address: "127.0.0.1:{PORTS[0]}", user: proxy, password: proxy_pw, database: im}}
  - {{name: db1, address: "127.0.0.1:{PORTS[1]}", user: proxy, password: proxy_pw, database: im}}
default_backend: db0
shard_map: {SHARD_MAP}
""")


def plan(binary, queries):
    out = run([binary, SHARD_MAP, "db0", "db0", "db1"], input="\n".join(queries) + "\n").stdout
    return [line.split("\t", 3) for line in out.splitlines()]


def connect(backend):
    port = int(PORTS[0] if backend == "db0" else PORTS[1])
    return pymysql.connect(host="127.0.0.1", port=port, user="proxy", password="proxy_pw", database="im",
                           autocommit=True)


def explain_partitions(backend, sql):
    with connect(backend) as conn, conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute("EXPLAIN PARTITIONS " + sql)
        return cur.fetchall()[0]["partitions"]


def main():
    binary = sys.argv[1]
    env = dict(os.environ, SP_CLUSTER_DIR=CLUSTER_DIR, SP_CLUSTER_PORTS=",".join(PORTS))
    config = os.path.join(tempfile.mkdtemp(), "shardproxy.yaml")
    write_config(config)
    failures = 0
    run([os.path.join(REPO, "scripts", "cluster"), "up"], env=env)
    try:
        run([os.path.join(REPO, "scripts", "schema"), "apply", "--drop", "--config", config,
             "--from", "2024-01", "--to", "2026-12"])
        plans = plan(binary, [q for q, _ in CASES])
        for (query, expected), (kind, backend, table, sql) in zip(CASES, plans):
            got = explain_partitions(backend, sql) if kind == "route" else None
            ok = kind == "route" and got == expected
            print(("ok   " if ok else "FAIL ") + f"{table}: {got} (expected {expected})")
            failures += not ok
        # Without the added predicate the same query reads every partition.
        bare = plans[0][3].split(" AND message_month")[0]
        every = explain_partitions(plans[0][1], bare)
        ok = every is not None and every.count(",") >= 35
        print(("ok   " if ok else "FAIL ") + f"without the month predicate: {every.count(',') + 1} partitions read")
        failures += not ok
        failures += check_placement(binary)
    finally:
        run([os.path.join(REPO, "scripts", "cluster"), "down"], env=env)
    print("FAILED" if failures else "PASSED")
    return 1 if failures else 0


def check_placement(binary):
    """Rows inserted through plans land on the shard Python's zlib predicts."""
    failures = 0
    peers = [0, 1, 7, 42, 1001, 88001, 123456789, 9223372036854775807]
    inserts = [f"INSERT INTO tg_channel_message (peer_id, message_id, message_month, message_time, ingested_at) "
               f"VALUES ({p}, 1, '2025-03-01', '2025-03-02 10:00:00', NOW(3))" for p in peers]
    for peer, (kind, backend, table, sql) in zip(peers, plan(binary, inserts)):
        bucket = zlib.crc32(f"channel:{peer}".encode()) % 64
        shard = f"s{bucket // 16:02d}"
        expected_backend = "db0" if bucket < 32 else "db1"
        with connect(backend) as conn, conn.cursor() as cur:
            cur.execute(sql)
            cur.execute(f"SELECT CRC32(CONCAT('channel:', peer_id)) % 64 FROM tg_channel_message_{shard} "
                        f"WHERE peer_id = {peer}")
            rows = cur.fetchall()
        ok = (kind, backend, table) == ("route", expected_backend, f"tg_channel_message_{shard}") and \
            rows == ((bucket,),)
        print(("ok   " if ok else "FAIL ") + f"peer {peer}: bucket {bucket} -> {table} on {backend}")
        failures += not ok
    return failures


if __name__ == "__main__":
    sys.exit(main())
