"""Reloads under load (issue 6), scaled for CI: while client threads run routed
statements through the proxy for ~20 s, the map is reloaded RELOADS times,
alternating two valid versions that move bucket 17 between s01 (db0) and s02
(db1), with an invalid map every INVALID_EVERY reloads. Bucket 17's rows exist
on both shards, so every statement has data wherever it lands.

Asserted: zero failed statements, zero dropped connections, every invalid map
refused with the running map untouched, and after each valid swap a new
statement lands on the new shard (checked directly on the backends).
Printed: reload latency (admin round trip and the proxy's own duration_ms) and
statements served during the reloads.

  cd tests/integration && SP_PROXY_BINARY=../../build/proxy/shardproxy /usr/bin/python3 -m unittest -v reload_load_test
"""
import os
import random
import statistics
import threading
import time
import unittest

import pymysql

import admin_proxy as ap

DURATION_S = float(os.environ.get("SP_RELOAD_LOAD_SECONDS", "20"))
RELOADS = int(os.environ.get("SP_RELOAD_LOAD_RELOADS", "30"))
INVALID_EVERY = 3
DB2_BACKEND = (f"  - {{name: db2, address: 127.0.0.1:{ap.DB1_PORT}, user: proxy, password: proxy_pw, "
               f"database: im, max_connections: 8}}\n")
THREADS = 6
SHARDS_A = dict(s01="0-31", s02="32-63")
SHARDS_B = dict(s01="0-16,18-31", s02="17,32-63")
KEYS17 = ap.keys_in_bucket(17, 20)
OTHER_KEYS = ap.keys_in_bucket(5, 10) + ap.keys_in_bucket(40, 10)
INVALID_MAPS = [
    lambda v: ap.map_text(v, s01="0-20", s02="17,32-63"),                 # buckets 17-20 twice
    lambda v: ap.map_text(v, s01="0-31", s02="32-62"),                    # bucket 63 unmapped
    lambda v: ap.map_text(v, s02_backend="db7", **SHARDS_A),              # unknown backend
    lambda v: ap.map_text(v, hot_keys={KEYS17[0]: "s09"}, **SHARDS_A),    # hot key to no shard
    lambda v: ap.map_text(v, **SHARDS_A).replace("buckets: 64", "bukets: 64"),  # typo
    lambda v: "version: %d\ntables: {x: [\n" % v,                         # malformed YAML
    lambda v: ap.map_text(v - 2, hot_keys={KEYS17[1]: "s02"}, **SHARDS_A),  # version not greater
]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.ok = 0
        self.errors = []
        self.drops = 0


def seed_rows():
    """Bucket 17's rows on both shards; other buckets on their owner."""
    for port, shard in ((ap.DB0_PORT, "s01"), (ap.DB1_PORT, "s02")):
        c = ap.direct(port)
        values = ",".join(f"({k}, {m}, 'seed')" for k in KEYS17 for m in range(1, 6))
        ap.rows(c, f"INSERT INTO {ap.TABLE}_{shard} (peer_id, msg_id, body) VALUES {values}")
        owned = [k for k in OTHER_KEYS if (ap.bucket_of(k) < 32) == (shard == "s01")]
        values = ",".join(f"({k}, {m}, 'seed')" for k in owned for m in range(1, 6))
        ap.rows(c, f"INSERT INTO {ap.TABLE}_{shard} (peer_id, msg_id, body) VALUES {values}")
        c.close()


def client(index, stop, stats, msg_ids):
    try:
        conn = ap.app(read_timeout=30)
        conn_id = conn.thread_id()  # the proxy's connection id from the handshake
    except Exception as e:  # noqa: BLE001
        with stats.lock:
            stats.errors.append(f"client {index} could not start: {e!r}")
        return
    rnd = random.Random(index)
    n = 0
    while not stop.is_set():
        key = rnd.choice(KEYS17) if rnd.random() < 0.7 else rnd.choice(OTHER_KEYS)
        try:
            kind = rnd.random()
            if kind < 0.6:
                got = ap.rows(conn, f"SELECT COUNT(*) FROM {ap.TABLE} WHERE peer_id = %s", (key,))[0][0]
                if got < 5:
                    raise AssertionError(f"peer_id {key}: {got} rows, expected at least 5")
            elif kind < 0.8:
                msg_id = next(msg_ids)
                ap.rows(conn, f"INSERT INTO {ap.TABLE} (peer_id, msg_id, body) VALUES (%s, %s, 'load')", (key, msg_id))
            else:
                # A transaction keeps its snapshot of the map until COMMIT.
                ap.rows(conn, "BEGIN")
                ap.rows(conn, f"SELECT body FROM {ap.TABLE} WHERE peer_id = %s AND msg_id = 1", (key,))
                ap.rows(conn, f"UPDATE {ap.TABLE} SET body = 'txn' WHERE peer_id = %s AND msg_id = 2", (key,))
                ap.rows(conn, "COMMIT")
            n += 1
        except pymysql.err.OperationalError as e:
            with stats.lock:
                stats.errors.append(f"client {index}: {e!r}")
                if e.args and e.args[0] in (2006, 2013, 2055):
                    stats.drops += 1
                    return
        except Exception as e:  # noqa: BLE001 - every failure counts
            with stats.lock:
                stats.errors.append(f"client {index}: {e!r}")
    # The same connection from start to end (PyMySQL never reconnects by
    # itself; ping(reconnect=False) fails on a dropped one).
    try:
        conn.ping(reconnect=False)
        if conn.thread_id() != conn_id:
            raise AssertionError("connection id changed")
    except Exception as e:  # noqa: BLE001
        with stats.lock:
            stats.drops += 1
            stats.errors.append(f"client {index}: connection lost: {e!r}")
    conn.close()
    with stats.lock:
        stats.ok += n


def landing_shard(key, msg_id):
    """Where a row inserted through the proxy really is, read on the backends."""
    found = []
    for port, shard in ((ap.DB0_PORT, "s01"), (ap.DB1_PORT, "s02")):
        c = ap.direct(port)
        if ap.rows(c, f"SELECT 1 FROM {ap.TABLE}_{shard} WHERE peer_id = %s AND msg_id = %s", (key, msg_id)):
            found.append(shard)
        c.close()
    return found


class ReloadUnderLoad(unittest.TestCase):
    def test_reloads_under_load(self):
        ap.create_tables()
        seed_rows()
        run = ap.ProxyRun("reload_load")
        version = 1
        run.write_map(ap.map_text(version, **SHARDS_A))
        run.start()
        stats = Stats()
        stop = threading.Event()
        counter = iter(range(1_000_000, 10_000_000))
        lock = threading.Lock()

        def msg_ids():
            while True:
                with lock:
                    yield next(counter)

        ids = msg_ids()
        threads = [threading.Thread(target=client, args=(i, stop, stats, ids)) for i in range(THREADS)]
        admin = ap.admin()
        probe = ap.app()
        rtt_ms, proxy_ms, swap_ms, refused = [], [], [], 0
        try:
            statements_before = int(ap.dict_rows(admin, "SHOW SESSIONS")[0]["statements"])
            for t in threads:
                t.start()
            started = time.monotonic()
            interval = DURATION_S / (RELOADS + RELOADS // INVALID_EVERY)
            for i in range(RELOADS):
                version += 1
                shards = SHARDS_B if i % 2 == 0 else SHARDS_A
                # Every other B version puts s02 on db2, a second name for db1's
                # server that only that config has: the next reload removes a
                # backend while statements planned on the old map may still
                # be on their way to it (or in a transaction pinned to it).
                via_db2 = i % 4 == 0
                run.write_config(DB2_BACKEND if via_db2 else "")
                run.write_map(ap.map_text(version, s02_backend="db2" if via_db2 else "db1", **shards))
                t0 = time.monotonic()
                r = ap.dict_rows(admin, "RELOAD SHARD MAP")[0]
                rtt_ms.append((time.monotonic() - t0) * 1000)
                proxy_ms.append(float(r["duration_ms"]))
                swap_ms.append(float(r["swap_ms"]))
                self.assertEqual(r["result"], "applied", r)
                self.assertEqual(int(r["new_version"]), version)
                self.assertEqual(r["backends_added"], "db2" if via_db2 else "-", r)
                self.assertEqual(r["backends_removed"], "db2" if i % 4 == 1 else "-", r)
                # A new statement lands on the new owner of bucket 17.
                expect = "s02" if shards is SHARDS_B else "s01"
                key, msg_id = KEYS17[i % len(KEYS17)], 900_000 + i
                ap.rows(probe, f"INSERT INTO {ap.TABLE} (peer_id, msg_id, body) VALUES (%s, %s, 'probe')",
                        (key, msg_id))
                self.assertEqual(landing_shard(key, msg_id), [expect], f"reload {i} (version {version})")
                time.sleep(interval)
                if i % INVALID_EVERY == INVALID_EVERY - 1:
                    bad = INVALID_MAPS[(i // INVALID_EVERY) % len(INVALID_MAPS)](version + 1)
                    run.write_map(bad)
                    with self.assertRaises(pymysql.err.MySQLError, msg=bad):
                        ap.rows(admin, "RELOAD SHARD MAP")
                    refused += 1
                    self.assertEqual(ap.route_backend(probe, key)[0], expect)
                    time.sleep(interval)
            elapsed = time.monotonic() - started
            stop.set()
            for t in threads:
                t.join(60)
            statements = int(ap.dict_rows(admin, "SHOW SESSIONS")[0]["statements"]) - statements_before
        finally:
            stop.set()
            admin.close()
            probe.close()
            alive = run.alive()
            code = run.stop()
            ap.drop_tables()
        self.assertTrue(alive, run.log_tail())
        self.assertEqual(code, 0)
        self.assertEqual(stats.errors, [], "\n".join(stats.errors[:20]))
        self.assertEqual(stats.drops, 0)
        self.assertGreater(stats.ok, 0)
        rtt_sorted = sorted(rtt_ms)
        print(f"\n{RELOADS} valid reloads + {refused} refused maps in {elapsed:.1f} s; {THREADS} client threads; "
              f"{stats.ok} client statements/transactions OK, 0 failed, 0 dropped connections; "
              f"{statements} statements served by the proxy during the run ({statements / elapsed:.0f}/s)\n"
              f"reload latency, admin round trip: median {statistics.median(rtt_ms):.2f} ms, "
              f"p95 {rtt_sorted[int(len(rtt_sorted) * 0.95) - 1]:.2f} ms, max {max(rtt_ms):.2f} ms; "
              f"in the proxy: swap_ms (validate + swap) median {statistics.median(swap_ms):.2f} ms, "
              f"max {max(swap_ms):.2f} ms; duration_ms (+ cache write) median {statistics.median(proxy_ms):.2f} ms, "
              f"max {max(proxy_ms):.2f} ms", flush=True)


if __name__ == "__main__":
    unittest.main()
