"""Helpers for the data-lifecycle tests (lifecycle_test.py): partitions of a
month-partitioned channel table, the msg archive.

The tests start their OWN shardproxy (admin_proxy.ProxyRun: free ports, scratch
directory) with a map of two scratch logical tables whose physical tables are
created on the shared test cluster from the cluster's own DDL
(scripts/schema_ddl.sql, sections tg_channel_message and msg):

  it_life_chan  bucket method like tg_channel_message (key_prefix "channel:",
                64 buckets): s00 = buckets 0-31 on db0, s01 = 32-63 on db1;
                month rule message_month / message_time.
  it_life_msg   mod method like msg (4 shards): 00-01 on db0, 02-03 on db1.

The unsharded mirror holding all rows (the answer one MariaDB would give) is
a table of the same DDL in database it_life_mirror on db0.
"""
import os
import re
import zlib

import admin_proxy as ap
# Direct connections create and read the mirror database (it_life_mirror): as root.
from admin_proxy import DB0_PORT, DB1_PORT, rows, root as direct

CHAN, MSG = "it_life_chan", "it_life_msg"
CHAN_SHARDS = (("s00", DB0_PORT), ("s01", DB1_PORT))
MSG_SHARDS = (("00", DB0_PORT), ("01", DB0_PORT), ("02", DB1_PORT), ("03", DB1_PORT))
MIRROR_DB = "it_life_mirror"
DDL_FILE = os.path.join(ap.REPO_ROOT, "scripts", "schema_ddl.sql")


def ddl(section, table):
    """CREATE TABLE of one section of scripts/schema_ddl.sql for `table`."""
    with open(DDL_FILE, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^-- table: " + section + r"\n(.*?)(?=^-- table: |\Z)", text, re.S | re.M)
    body = "\n".join(l for l in m.group(1).splitlines() if not l.lstrip().startswith("--")).strip().rstrip(";")
    return body.replace("{table}", f"`{table}`").replace("{shard}", table[-2:])


def month_partitions(first, last):
    """PARTITION BY clause with p<YYYYMM> for months first..last ('YYYY-MM') plus pmax, as scripts/schema makes."""
    def idx(text):
        y, m = map(int, text.split("-"))
        return y * 12 + m - 1
    parts = []
    for i in range(idx(first), idx(last) + 1):
        n = i + 1
        parts.append(f"PARTITION p{i // 12:04d}{i % 12 + 1:02d} VALUES LESS THAN ('{n // 12:04d}-{n % 12 + 1:02d}-01')")
    parts.append("PARTITION pmax VALUES LESS THAN (MAXVALUE)")
    return " PARTITION BY RANGE COLUMNS (message_month) (" + ", ".join(parts) + ")"


def bucket_of(peer_id):
    return zlib.crc32(b"channel:%d" % peer_id) % 64


def chan_shard_port(peer_id):
    return DB0_PORT if bucket_of(peer_id) < 32 else DB1_PORT


def map_text(version=1, msg_extra="", chan_extra=""):  # msg_extra: ARCHIVE_MAP_EXTRA; chan_extra: BACKFILL_MAP_EXTRA
    return f"""# written by tests/integration/lifecycle_proxy.py
version: {version}
tables:
  {CHAN}:
    key: peer_id
    method: bucket
    key_prefix: "channel:"
    buckets: 64
    table: "{CHAN}_{{shard}}"
    shards:
      s00: {{buckets: "0-31", backend: db0}}
      s01: {{buckets: "32-63", backend: db1}}
    month: {{column: message_month, time_column: message_time, max_span_months: 36}}
    scatter: allow
{chan_extra}  {MSG}:
    key: conv_id
    method: mod
    shards: 4
    table: "{MSG}_{{shard:02}}"
    backends: {{db0: "0-1", db1: "2-3"}}
    scatter: allow
{msg_extra}"""


class LifecycleProxy(ap.ProxyRun):
    """A proxy on the lifecycle map; `extra` is appended to the config (partitions:, archive:)."""

    def __init__(self, name, extra="", msg_extra="", chan_extra=""):
        self.extra = extra
        super().__init__(name)
        self.write_map(map_text(msg_extra=msg_extra, chan_extra=chan_extra))

    def write_config(self, extra_backends=""):
        text = ap.config_text(extra_backends) + self.extra
        # The app user may run DDL through the proxy (scratch tables), as in the cluster's test config.
        text = text.replace("default_database: im}", "default_database: im, allow_ddl: true}")
        with open(self.config_path, "w") as f:
            f.write(text)


def create_chan_tables(first="2024-10", last="2024-12"):
    """Fresh it_life_chan_s00/_s01 (months first..last + pmax) and the mirror table."""
    for shard, port in CHAN_SHARDS:
        c = direct(port)
        rows(c, f"DROP TABLE IF EXISTS {CHAN}_{shard}")
        rows(c, ddl("tg_channel_message", f"{CHAN}_{shard}") + month_partitions(first, last))
        c.close()
    c = direct(DB0_PORT)
    rows(c, f"CREATE DATABASE IF NOT EXISTS {MIRROR_DB}")
    rows(c, f"DROP TABLE IF EXISTS {MIRROR_DB}.{CHAN}")
    rows(c, ddl("tg_channel_message", f"{MIRROR_DB}`.`{CHAN}"))
    c.close()


BACKFILL_MAP_EXTRA = f'    backfill: {{table: "{CHAN}_backfill_{{shard}}"}}\n'


def create_backfill_tables():
    """it_life_chan_backfill_s00/_s01: the channel DDL without partitions."""
    for shard, port in CHAN_SHARDS:
        c = direct(port)
        rows(c, f"DROP TABLE IF EXISTS {CHAN}_backfill_{shard}")
        rows(c, ddl("tg_channel_message", f"{CHAN}_backfill_{shard}"))
        c.close()


def drop_chan_tables():
    for shard, port in CHAN_SHARDS:
        c = direct(port)
        rows(c, f"DROP TABLE IF EXISTS {CHAN}_{shard}")
        rows(c, f"DROP TABLE IF EXISTS {CHAN}_backfill_{shard}")
        c.close()
    c = direct(DB0_PORT)
    rows(c, f"DROP TABLE IF EXISTS {MIRROR_DB}.{CHAN}")
    c.close()


def partitions_of(port, table):
    c = direct(port)
    r = rows(c, "SELECT PARTITION_NAME, PARTITION_DESCRIPTION FROM information_schema.PARTITIONS "
                "WHERE TABLE_SCHEMA = 'im' AND TABLE_NAME = %s ORDER BY PARTITION_ORDINAL_POSITION", (table,))
    c.close()
    return [name for name, _ in r]


ARCHIVE_MAP_EXTRA = f'    archive: {{table: "{MSG}_archive_{{shard:02}}"}}\n'


def msg_shard_port(conv_id):
    return MSG_SHARDS[conv_id % 4][1]


def create_msg_tables(with_archive=True):
    """Fresh hot (and archive) tables it_life_msg_NN from the msg DDL, and the mirror."""
    for shard, port in MSG_SHARDS:
        c = direct(port)
        for name in (f"{MSG}_{shard}", f"{MSG}_archive_{shard}"):
            rows(c, f"DROP TABLE IF EXISTS {name}")
        rows(c, ddl("msg", f"{MSG}_{shard}"))
        if with_archive:
            rows(c, ddl("msg", f"{MSG}_archive_{shard}"))
        c.close()
    c = direct(DB0_PORT)
    rows(c, f"CREATE DATABASE IF NOT EXISTS {MIRROR_DB}")
    rows(c, f"DROP TABLE IF EXISTS {MIRROR_DB}.{MSG}")
    rows(c, ddl("msg", f"{MIRROR_DB}`.`{MSG}"))
    c.close()


def drop_msg_tables():
    for shard, port in MSG_SHARDS:
        c = direct(port)
        for name in (f"{MSG}_{shard}", f"{MSG}_archive_{shard}"):
            rows(c, f"DROP TABLE IF EXISTS {name}")
        c.close()
    c = direct(DB0_PORT)
    rows(c, f"DROP TABLE IF EXISTS {MIRROR_DB}.{MSG}")
    c.close()
