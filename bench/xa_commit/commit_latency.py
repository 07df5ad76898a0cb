"""COMMIT latency of one- and two-backend transactions through a running proxy (issue 35).

Usage: commit_latency.py <proxy port> <accounts table>: a sharded table keyed by conv_id whose
rows 0 and 1 live on one backend and 8 on the other (tests/integration/xa_transactions_test.py
makes one); user app/app_pw, database im. BEGIN, UPDATE one or two rows, COMMIT, 300 times each;
prints the p50/p95 of the COMMIT and the p50 of the whole transaction. Under
transactions.cross_backend: refuse the two-backend case answers 9120."""
import sys, time, pymysql
port, table = int(sys.argv[1]), sys.argv[2]
c = pymysql.connect(host="127.0.0.1", port=port, user="app", password="app_pw", database="im", autocommit=True)
cur = c.cursor()
def run(pair, n=300):
    commit, total = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        cur.execute("BEGIN")
        for a in pair:
            cur.execute(f"UPDATE {table} SET balance = balance + 1 WHERE conv_id = {a}")
        t1 = time.perf_counter()
        cur.execute("COMMIT")
        t2 = time.perf_counter()
        commit.append(t2 - t1); total.append(t2 - t0)
    commit.sort(); total.sort()
    return commit[n // 2] * 1000, commit[int(n * .95)] * 1000, total[n // 2] * 1000
for label, pair in (("1 backend", (0, 1)), ("2 backends", (0, 8))):
    try:
        p50, p95, t50 = run(pair)
        print(f"{label}: COMMIT p50 {p50:.2f} ms p95 {p95:.2f} ms; whole transaction p50 {t50:.2f} ms")
    except pymysql.MySQLError as e:
        print(f"{label}: {e}")
        cur.execute("ROLLBACK")
