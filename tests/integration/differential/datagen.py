"""Rows of the differential test: the same seeded rows go through the proxy
(routed INSERTs, one shard per statement) and into the unsharded reference.

Values are chosen to exercise the merger: conv_id up to 2^64-1 (SUM overflows
BIGINT and must become DECIMAL), mixed-case words that are distinct under
utf8mb4_general_ci (binary and collation order differ, no ambiguous ties),
NULLs in every nullable tg_channel_message column, rows exactly on month
boundaries, fractional seconds.
"""
import datetime
import zlib

MSG_COLUMNS = ["conv_id", "seq", "msg_id", "sender_uid", "msg_type", "content", "status", "created_at"]
TG_COLUMNS = ["peer_id", "message_id", "message_month", "message_time", "edited_at", "reply_to_msg_id",
              "text_body", "media_type", "content_hash", "ingested_at"]

WORDS = ["apple", "Banana", "cherry", "Date", "elder", "Fig", "grape", "Hazel", "iris", "Juniper", "kiwi",
         "Lemon", "mango", "Nectar", "olive", "Peach", "quince", "Rowan", "sage", "Thyme", "umbra", "Vine"]
MEDIA = ["photo", "video", "doc", "audio"]
MONTHS = [datetime.date(2025, m, 1) for m in range(1, 13)]


def lit(v):
    """An SQL literal for a generated value (no quotes occur inside strings)."""
    if v is None:
        return "NULL"
    if isinstance(v, (int,)):
        return str(v)
    if isinstance(v, datetime.datetime):
        return "'" + v.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "'"
    if isinstance(v, datetime.date):
        return "'" + v.isoformat() + "'"
    return "'" + str(v) + "'"


def msg_shard(conv_id):
    return conv_id % 16


def tg_bucket(peer_id):
    return zlib.crc32(f"channel:{peer_id}".encode()) % 64


class Dataset:
    def __init__(self, rng):
        self.rng = rng
        self.conv_ids = self._conv_ids()
        self.absent_conv_ids = [c + 16 * 1000 for c in self.conv_ids[:8]]  # valid keys, no rows
        self.msg_rows = self._msg_rows()
        self.peer_ids = self._peer_ids()
        self.absent_peer_ids = [p + 7 for p in self.peer_ids[:6]]
        self.tg_rows = self._tg_rows()
        self.senders = sorted({r[3] for r in self.msg_rows})

    def _conv_ids(self):
        rng = self.rng
        ids = {18446744073709551615, 18446744073709551600, 0, 1}
        for shard in range(16):  # every shard gets conversations, small and huge keys
            ids.add(shard + 16 * rng.randrange(1, 5000))
            ids.add(shard + 16 * rng.randrange(10**15, 10**17))
        return sorted(ids)

    def _msg_rows(self):
        rng = self.rng
        rows, msg_id = [], 7_000_000_000_000_000_000
        base = datetime.datetime(2025, 3, 1)
        for conv in self.conv_ids:
            n = rng.choice([0, 1, 3, 10, 25, 40, 60, 90, 150, 200])
            for seq in range(1, n + 1):
                msg_id += rng.randrange(1, 10**12)
                sender = rng.choice([10, 11, 12, 13, 20, 21, 99, 1000, 18446744073709551000])
                content = "-".join(rng.sample(WORDS, rng.randrange(1, 3)))
                created = base + datetime.timedelta(seconds=rng.randrange(0, 86400 * 200),
                                                    milliseconds=rng.randrange(0, 1000))
                rows.append((conv, seq, msg_id, sender, rng.randrange(1, 5), content, rng.choice([0, 0, 0, 1, 2]),
                             created))
        return rows

    def _peer_ids(self):
        rng = self.rng
        ids, buckets = set(), set()
        while len(ids) < 24 or len({b // 16 for b in buckets}) < 4:
            p = rng.choice([rng.randrange(1, 10**6), rng.randrange(10**9, 10**10)])
            ids.add(p)
            buckets.add(tg_bucket(p))
        return sorted(ids)

    def _tg_rows(self):
        rng = self.rng
        rows, message_id = [], 100
        for peer in self.peer_ids:
            for _ in range(rng.choice([0, 2, 10, 30, 50, 70, 120, 150])):
                message_id += rng.randrange(1, 50)
                month = rng.choice(MONTHS)
                if rng.random() < 0.05:
                    t = datetime.datetime(month.year, month.month, 1)  # first instant of the month
                else:
                    t = datetime.datetime(month.year, month.month, rng.randrange(1, 29), rng.randrange(24),
                                          rng.randrange(60), rng.randrange(60), rng.randrange(1000) * 1000)
                edited = t + datetime.timedelta(minutes=rng.randrange(1, 500)) if rng.random() < 0.3 else None
                reply = rng.randrange(100, message_id + 1) if rng.random() < 0.4 else None
                text = rng.choice(WORDS) if rng.random() < 0.8 else None
                media = rng.choice(MEDIA) if rng.random() < 0.5 else None
                chash = f"{rng.getrandbits(256):064x}" if rng.random() < 0.5 else None
                rows.append((peer, message_id, month, t, edited, reply, text, media, chash, t))
        return rows

    def insert_statements(self):
        """(logical table, SQL) per key: each statement's rows live on one shard."""
        out = []
        for table, cols, rows in (("msg", MSG_COLUMNS, self.msg_rows), ("tg_channel_message", TG_COLUMNS,
                                                                           self.tg_rows)):
            by_key = {}
            for r in rows:
                by_key.setdefault(r[0], []).append(r)
            for key in sorted(by_key):
                values = ",".join("(" + ",".join(lit(v) for v in r) + ")" for r in by_key[key])
                out.append((table, f"INSERT INTO {table} ({','.join(cols)}) VALUES {values}"))
        return out
