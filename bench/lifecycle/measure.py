#!/usr/bin/python3
"""Measures the data-lifecycle figures of issue 18 (never asserted by tests):

  * archive rate: rows/s of ARCHIVE <msg table> OLDER THAN n DAYS (batches of
    2000, no pause), per shard and overall;
  * the extra latency of a hot-then-cold read: the same conversation range read
    through a proxy whose map has `archive:` (the SELECT becomes a UNION ALL of
    the hot and archive tables, ORDER BY / LIMIT in both branches, the cold one
    guarded by the hot table's lowest seq) and through one without it (hot
    table only);
  * the same page's SQL sent straight to a backend in three shapes: the hot
    table alone, the union as routed now, and the plain union routed before
    (no guard, no ORDER BY / LIMIT in the branches), to show what each costs
    the server without the proxy.

  bench/lifecycle/measure.py [--convs 200] [--per-conv 500] [--reads 2000]

Uses the integration-test helpers (scratch tables it_life_msg_NN on the test
cluster; SP_DB0_PORT / SP_DB1_PORT, SP_PROXY_BINARY as for ctest) and prints
a small report. Run with the cluster up (scripts/cluster up --ports ...).
"""
import argparse
import datetime
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "integration"))

import admin_proxy as ap  # noqa: E402
import lifecycle_proxy as lp  # noqa: E402
from admin_proxy import direct, rows  # noqa: E402

INSERT = ("INSERT INTO {} (conv_id, seq, msg_id, sender_uid, msg_type, content, status, created_at) "
          "VALUES (%s, %s, %s, 7, 1, %s, 0, %s)")


def load(convs, per_conv):
    start = datetime.datetime(2026, 1, 1)
    by_table = {}
    for conv in convs:
        table = f"{lp.MSG}_{conv % 4:02d}"
        for seq in range(1, per_conv + 1):
            when = (start + datetime.timedelta(minutes=10 * seq)).strftime("%Y-%m-%d %H:%M:%S")
            by_table.setdefault(table, []).append((conv, seq, conv * 1000000 + seq, b"x" * 120, when))
    for shard, port in lp.MSG_SHARDS:
        table = f"{lp.MSG}_{shard}"
        c = direct(port)
        values = by_table.get(table, [])
        with c.cursor() as cur:
            for i in range(0, len(values), 5000):
                cur.executemany(INSERT.format(table), values[i:i + 5000])
        c.close()


def timed_reads(sql_for, convs, n, connect=None):
    app = (connect or ap.app)()
    samples = []
    rng = random.Random(7)
    for _ in range(n):
        sql = sql_for(rng.choice(convs))
        t = time.perf_counter()
        rows(app, sql)
        samples.append((time.perf_counter() - t) * 1e6)
    app.close()
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--convs", type=int, default=200)
    parser.add_argument("--per-conv", type=int, default=500)
    parser.add_argument("--reads", type=int, default=2000)
    args = parser.parse_args()
    convs = list(range(5001, 5001 + args.convs))
    lp.create_msg_tables()
    t = time.perf_counter()
    load(convs, args.per_conv)
    print(f"loaded {len(convs) * args.per_conv} rows in {time.perf_counter() - t:.1f} s")

    # Archive: cutoff 2026-01-03 00:00 moves seq < 288 (10 minutes per seq from 2026-01-01).
    proxy = lp.LifecycleProxy("lifecycle-measure", extra="archive: {batch_rows: 2000, pause_ms: 0}\n",
                              msg_extra=lp.ARCHIVE_MAP_EXTRA)
    proxy.start()
    try:
        admin = ap.admin(read_timeout=3600)
        t = time.perf_counter()
        result = rows(admin, "ARCHIVE it_life_msg BEFORE '2026-01-03 00:00:00'")
        wall = time.perf_counter() - t
        admin.close()
        moved = sum(int(r[6]) for r in result)
        print(f"ARCHIVE: {moved} rows in {wall:.2f} s = {moved / wall:.0f} rows/s overall (batches of 2000, no pause)")
        for r in result:
            print(f"  shard {r[1]}: {r[6]} rows, {r[7]} batches, {r[9]} s in batches, {r[10]} rows/s")
        hot = lambda c: f"SELECT seq, content FROM {lp.MSG} WHERE conv_id = {c} AND seq > 400 ORDER BY seq LIMIT 50"
        cold = lambda c: f"SELECT seq, content FROM {lp.MSG} WHERE conv_id = {c} AND seq > 250 ORDER BY seq LIMIT 50"
        union_hot = timed_reads(hot, convs, args.reads)
        union_cold = timed_reads(cold, convs, args.reads)
    finally:
        proxy.stop()
    plain = lp.LifecycleProxy("lifecycle-measure-plain")
    plain.start()
    try:
        hot_only = timed_reads(hot, convs, args.reads)
    finally:
        plain.stop()
    # Straight to db0 (shards 00 and 01): the routed SQL shapes without the proxy.
    db0_convs = [c for c in convs if c % 4 in (0, 1)]
    guard = ("`seq` < (SELECT IFNULL(MIN(`seq`), 18446744073709551615) FROM `{hot}` WHERE `conv_id` = {c})")
    where = "conv_id = {c} AND seq > 400"

    def shape(kind):
        def sql_for(c):
            hot, arch = f"{lp.MSG}_{c % 4:02d}", f"{lp.MSG}_archive_{c % 4:02d}"
            w = where.format(c=c)
            if kind == "hot":
                return f"SELECT seq, content FROM `{hot}` WHERE {w} ORDER BY seq LIMIT 50"
            if kind == "before":
                return (f"SELECT seq, content FROM (SELECT * FROM `{hot}` UNION ALL SELECT * FROM `{arch}`) AS t "
                        f"WHERE {w} ORDER BY seq LIMIT 50")
            g = guard.format(hot=hot, c=c)
            return (f"SELECT seq, content FROM ((SELECT * FROM `{hot}` AS t WHERE ({w}) ORDER BY seq LIMIT 50) "
                    f"UNION ALL (SELECT * FROM `{arch}` AS t WHERE ({w}) AND {g} ORDER BY seq LIMIT 50)) AS t "
                    f"WHERE {w} ORDER BY seq LIMIT 50")
        return sql_for

    direct_db0 = lambda: direct(ap.DB0_PORT)
    direct_times = {k: timed_reads(shape(k), db0_convs, args.reads, direct_db0) for k in ("hot", "now", "before")}
    print(f"reads of 50 messages, {args.reads} each, median / p99 in microseconds (through the proxy):")
    print(f"  hot table only (map without archive):        {hot_only[0]:8.0f} / {hot_only[1]:8.0f}")
    print(f"  hot+cold union, range entirely in hot:       {union_hot[0]:8.0f} / {union_hot[1]:8.0f}")
    print(f"  hot+cold union, range starting in the cold:  {union_cold[0]:8.0f} / {union_cold[1]:8.0f}")
    print("the same hot-range page sent straight to db0, median / p99 in microseconds:")
    print(f"  hot table only:                              {direct_times['hot'][0]:8.0f} / {direct_times['hot'][1]:8.0f}")
    print(f"  union as routed now (guard, LIMIT pushed):   {direct_times['now'][0]:8.0f} / {direct_times['now'][1]:8.0f}")
    print(f"  plain union (as routed before):              {direct_times['before'][0]:8.0f} / {direct_times['before'][1]:8.0f}")
    lp.drop_msg_tables()


if __name__ == "__main__":
    main()
