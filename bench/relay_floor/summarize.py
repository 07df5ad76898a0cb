#!/usr/bin/env python3
"""The table of bench/relay_floor/measure: one row per target with the median
and range (min-max) of each figure over the rounds; ratios and added latency are
against direct in the same round. Several results.csv files (separate
invocations) can be given: their rounds are kept apart.
  bench/relay_floor/summarize.py RESULTS.csv [RESULTS.csv ...]"""
import csv, sys
rows = []
for i, path in enumerate(sys.argv[1:]):
    for r in csv.DictReader(open(path)):
        r["round"] = f"{i}.{r['round']}"
        rows.append(r)
direct = {r["round"]: r for r in rows if r["target"] == "direct"}
def num(v):
    try: return float(v)
    except ValueError: return None
def rng(vals, fmt):
    """median (min-max) of the rounds' values"""
    vals = sorted(v for v in vals if v is not None)
    if not vals: return "-"
    lo, hi, n = vals[0], vals[-1], len(vals)
    med = vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2
    if fmt.format(lo) == fmt.format(hi): return fmt.format(lo)
    return f"{fmt.format(med)} ({fmt.format(lo)}-{fmt.format(hi)})"
def ratio(r, key):
    d = direct.get(r["round"])
    return num(r[key]) / num(d[key]) if d and num(d[key]) else None
def added(r, key):
    d = direct.get(r["round"])
    return num(r[key]) - num(d[key]) if d else None
cols = ["target", "load", "QPS 8 thr", "x direct", "user µs/q", "sys µs/q", "CPU µs/q", "syscalls/q",
        "EAGAIN/q", "uring_enter/q", "cswitch/q", "QPS 64 thr", "x direct", "CPU µs/q 64",
        "p50 1 thr µs", "added", "p95 µs", "added"]
high = any(num(r.get("qpsH") or "-") is not None for r in rows)
if high:
    cols += ["QPS high", "x direct", "CPU µs/q high"]
print("| " + " | ".join(cols) + " |")
print("|" + "---|" * len(cols))
for t in dict.fromkeys(r["target"] for r in rows):
    rs = [r for r in rows if r["target"] == t]
    g = lambda k: [num(r.get(k, "-")) for r in rs]
    cpu = [num(r["user8"]) + num(r["sys8"]) if num(r["user8"]) is not None else None for r in rs]
    cells = [t, rng(g("load"), "{:.1f}"), rng(g("qps8"), "{:,.0f}"), rng([ratio(r, "qps8") for r in rs], "{:.2f}"),
             rng(g("user8"), "{:.1f}"), rng(g("sys8"), "{:.1f}"), rng(cpu, "{:.1f}"), rng(g("syscalls8"), "{:.2f}"),
             rng(g("eagain8"), "{:.2f}"), rng(g("enter8"), "{:.2f}"), rng(g("cswitch8"), "{:.2f}"),
             rng(g("qps64"), "{:,.0f}"), rng([ratio(r, "qps64") for r in rs], "{:.2f}"), rng(g("cpu64"), "{:.1f}"),
             rng(g("p50_1"), "{:.0f}"), rng([added(r, "p50_1") for r in rs], "{:+.0f}"),
             rng(g("p95_1"), "{:.0f}"), rng([added(r, "p95_1") for r in rs], "{:+.0f}")]
    if high:
        cells += [rng(g("qpsH"), "{:,.0f}"), rng([ratio(r, "qpsH") for r in rs], "{:.2f}"), rng(g("cpuH"), "{:.1f}")]
    print("| " + " | ".join(cells) + " |")
