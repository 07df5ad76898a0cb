#!/usr/bin/env python3
"""Keeps a SQLite full-text index of msg content up to date from shardproxy's change stream.

    scripts/changes_to_sqlite_fts.py --url http://127.0.0.1:8088 --db msg_fts.sqlite
    sqlite3 msg_fts.sqlite "SELECT conv_id, seq, content FROM msg_fts WHERE msg_fts MATCH 'hello'"

Reads GET /changes?tables=msg (docs/changes.md): an insert or edit (re)indexes the
message, a delete or a recall (status != 0) removes it. Each transaction of the
stream is applied in one SQLite transaction together with the stream's position,
so a crash or a restart of either side resumes exactly after the last transaction
applied: nothing is indexed twice, nothing is missed. `content` is VARBINARY: text
that is not UTF-8 comes as {"hex": ...} and is indexed decoded with replacement.
Standard library only.
"""
import argparse
import http.client
import json
import sqlite3
import sys
import time
import urllib.parse

SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS msg_fts USING fts5(content, conv_id UNINDEXED, seq UNINDEXED);
CREATE TABLE IF NOT EXISTS stream_position (id INTEGER PRIMARY KEY CHECK (id = 1), position TEXT NOT NULL);
"""


def text(value):
    if isinstance(value, dict) and "hex" in value:
        return bytes.fromhex(value["hex"]).decode("utf-8", "replace")
    return value or ""


def apply(db, change):
    image = change.get("after") or change["before"]
    key = (image["conv_id"], image["seq"])
    if change["op"] == "update":
        before = change["before"]
        db.execute("DELETE FROM msg_fts WHERE conv_id = ? AND seq = ?", (before["conv_id"], before["seq"]))
    db.execute("DELETE FROM msg_fts WHERE conv_id = ? AND seq = ?", key)
    if change["op"] != "delete" and int(image.get("status", 0)) == 0:
        db.execute("INSERT INTO msg_fts (content, conv_id, seq) VALUES (?, ?, ?)", (text(image["content"]), *key))


def saved_position(db):
    row = db.execute("SELECT position FROM stream_position WHERE id = 1").fetchone()
    return row[0] if row else None


def follow(url, db, table):
    parts = urllib.parse.urlsplit(url)
    query = {"tables": table}
    position = saved_position(db)
    if position:
        query["from"] = position
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=30)
    conn.request("GET", "/changes?" + urllib.parse.urlencode(query))
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"{resp.status}: {resp.read().decode(errors='replace')}")
    pending, applied = [], 0
    for line in resp:
        change = json.loads(line)
        if "error" in change:
            raise RuntimeError(change["error"])
        if change.get("heartbeat"):
            with db:
                db.execute("INSERT OR REPLACE INTO stream_position VALUES (1, ?)", (change["position"],))
            continue
        pending.append(change)
        if change["last"]:
            with db:  # the transaction's rows and its position, atomically
                for c in pending:
                    apply(db, c)
                db.execute("INSERT OR REPLACE INTO stream_position VALUES (1, ?)", (change["position"],))
            applied += len(pending)
            pending = []
            if applied % 1000 < 50:
                print(f"indexed {applied} changes, at {change['position']}", file=sys.stderr)
    raise RuntimeError("the stream ended")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default="http://127.0.0.1:8088", help="changes.listen of the proxy")
    p.add_argument("--db", default="msg_fts.sqlite")
    p.add_argument("--table", default="msg", help="the logical table with conv_id, seq, content, status")
    args = p.parse_args()
    db = sqlite3.connect(args.db)
    db.executescript(SCHEMA)
    while True:
        try:
            follow(args.url, db, args.table)
        except (OSError, RuntimeError, http.client.HTTPException, ValueError) as e:
            print(f"stream lost ({e}); resuming from the saved position in 1 s", file=sys.stderr)
            time.sleep(1)


if __name__ == "__main__":
    main()
