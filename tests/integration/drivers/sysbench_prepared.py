#!/usr/bin/python3
"""sysbench through the proxy with server-side prepared statements (issue 5).

1. oltp_point_select and oltp_read_write with the default --db-ps-mode=auto,
   10 s each: sysbench must finish (it aborts on any error it does not retry),
   with zero errors for point selects, zero reconnects, and for read/write only
   InnoDB's own deadlock retries allowed (under 1% of transactions, as in
   sysbench_smoke.py). Com_stmt_execute on db0 must grow: the statements
   really were prepared.
2. oltp_point_select prepared vs text (--db-ps-mode=disable) through the
   proxy, 5 s each, same run: QPS printed, never asserted.

The sbtest table is unsharded: it lives in its own database it_drv_sbtest on
db0 (the default backend), created directly and dropped at the end.
"""
import os
import re
import subprocess
import sys

HOST = "127.0.0.1"
PROXY_PORT = int(os.environ.get("SP_PROXY_PORT", "16033"))
DB0_PORT = int(os.environ.get("SP_DB0_PORT", "3307"))
SECONDS = int(os.environ.get("SP_SYSBENCH_PS_SECONDS", "10"))
COMPARE_SECONDS = int(os.environ.get("SP_SYSBENCH_COMPARE_SECONDS", "5"))
DATABASE = "it_drv_sbtest"
COMMON = ["--db-driver=mysql", f"--mysql-host={HOST}", f"--mysql-db={DATABASE}", "--tables=1",
          "--table-size=10000"]


def mariadb(sql):
    # As root: the proxy's backend account may not create databases (docs/security.md).
    subprocess.run(["mariadb", "-h", HOST, "-P", str(DB0_PORT), "-uroot", "-proot_pw", "-N", "-B", "-e", sql],
                   check=True, capture_output=True, text=True, timeout=60)


def stmt_executes():
    out = subprocess.run(["mariadb", "-h", HOST, "-P", str(DB0_PORT), "-uproxy", "-pproxy_pw", "-N", "-B", "-e",
                          "SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'"],
                         check=True, capture_output=True, text=True, timeout=60).stdout
    return int(out.split()[1])


def sysbench(test, port, user, password, command, extra=()):
    argv = ["sysbench", test, *COMMON, f"--mysql-port={port}", f"--mysql-user={user}",
            f"--mysql-password={password}", *extra, command]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        print(result.stdout, result.stderr, sep="\n", file=sys.stderr)
        raise SystemExit(f"FAIL: sysbench {test} {command} on port {port} exited with {result.returncode}")
    return result.stdout


def stat(output, name):
    match = re.search(rf"^\s*{re.escape(name)}:\s+(\d+)\s+\(([\d.]+) per sec\.\)", output, re.MULTILINE)
    if not match:
        raise SystemExit(f"FAIL: no '{name}:' line in sysbench output:\n{output}")
    return int(match.group(1)), float(match.group(2))


def run(test, seconds, threads, ps_mode):
    extra = [f"--threads={threads}", f"--time={seconds}"]
    if ps_mode:
        extra.append(f"--db-ps-mode={ps_mode}")
    executes_before = stmt_executes()
    output = sysbench(test, PROXY_PORT, "app", "app_pw", "run", extra)
    executes = stmt_executes() - executes_before
    queries, qps = stat(output, "queries")
    transactions, _ = stat(output, "transactions")
    ignored, _ = stat(output, "ignored errors")
    reconnects, _ = stat(output, "reconnects")
    print(f"{test} ps-mode={ps_mode or 'auto (default)'}: {queries} queries ({qps:.1f} QPS), {transactions} "
          f"transactions, {ignored} ignored errors, {reconnects} reconnects, {executes} COM_STMT_EXECUTE on db0")
    return output, qps, transactions, ignored, reconnects, executes


def main():
    checks = []  # (ok, description)
    mariadb(f"DROP DATABASE IF EXISTS {DATABASE}; CREATE DATABASE {DATABASE}; " +
            " ".join(f"GRANT ALL PRIVILEGES ON {DATABASE}.* TO {account};"
                     for account in ("'proxy'@'127.0.0.1'", "'proxy'@'%'", "'proxy'@'localhost'")))
    try:
        sysbench("oltp_point_select", DB0_PORT, "proxy", "proxy_pw", "prepare")
        out, _, trx, ignored, reconnects, executes = run("oltp_point_select", SECONDS, 4, None)
        checks += [("FATAL" not in out, "point_select: no FATAL"), (trx > 0, "point_select: transactions ran"),
                   (ignored == 0, f"point_select: {ignored} errors"),
                   (reconnects == 0, f"point_select: {reconnects} reconnects"),
                   (executes >= trx, f"point_select: {executes} COM_STMT_EXECUTE for {trx} point selects")]
        out, _, trx, ignored, reconnects, executes = run("oltp_read_write", SECONDS, 2, None)
        checks += [("FATAL" not in out, "read_write: no FATAL"), (trx > 0, "read_write: transactions ran"),
                   (ignored * 100 <= trx, f"read_write: {ignored} retried deadlocks in {trx} transactions"),
                   (reconnects == 0, f"read_write: {reconnects} reconnects"),
                   (executes >= trx * 10, f"read_write: {executes} COM_STMT_EXECUTE for {trx} transactions")]
        # Prepared vs text through the proxy, same run (informational).
        _, ps_qps, *_ = run("oltp_point_select", COMPARE_SECONDS, 4, "auto")
        _, text_qps, *_ = run("oltp_point_select", COMPARE_SECONDS, 4, "disable")
        if text_qps > 0:
            print(f"point_select through the proxy: prepared {ps_qps:.1f} QPS, text {text_qps:.1f} QPS, "
                  f"prepared/text {ps_qps / text_qps:.2f} (informational, not asserted)")
    finally:
        mariadb(f"DROP DATABASE IF EXISTS {DATABASE}; " +
                " ".join(f"REVOKE ALL PRIVILEGES ON {DATABASE}.* FROM {account};"
                         for account in ("'proxy'@'127.0.0.1'", "'proxy'@'%'", "'proxy'@'localhost'")))
    failed = [what for ok, what in checks if not ok]
    for what in failed:
        print(f"FAIL: {what}")
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
