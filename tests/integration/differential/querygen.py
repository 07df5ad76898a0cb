"""Seeded random SELECTs over the logical tables msg and tg_channel_message.

Each generated query carries what the comparison needs to know about it:
  total_order  ORDER BY determines the row sequence on this data (it covers a
               unique key of the rows, or every column of a grouped/distinct result);
  limited      it has LIMIT/OFFSET;
  order_cols   output column indexes of the ORDER BY terms (None when a term is
               not in the select list): the projection onto them must come back
               in the same sequence even when ties leave the rest open;
  ci_cols      output columns compared case-insensitively in that projection.
"""
import dataclasses
import datetime

from datagen import MEDIA, MONTHS, WORDS


@dataclasses.dataclass
class Query:
    sql: str
    table: str
    total_order: bool
    limited: bool
    order_cols: list
    ci_cols: set


# column -> (kind, nullable); kinds: int, str (ci text), bin, dt (datetime), date
MSG = {"conv_id": ("int", False), "seq": ("int", False), "msg_id": ("int", False), "sender_uid": ("int", False),
       "msg_type": ("int", False), "content": ("bin", False), "status": ("int", False),
       "created_at": ("dt", False)}
TG = {"peer_id": ("int", False), "message_id": ("int", False), "message_month": ("date", False),
      "message_time": ("dt", False), "edited_at": ("dt", True), "reply_to_msg_id": ("int", True),
      "text_body": ("str", True), "media_type": ("str", True), "content_hash": ("str", True),
      "ingested_at": ("dt", False)}
ROW_EXPRS = {"msg": [("seq * 2 + msg_type", "int"), ("conv_id % 1000", "int"), ("CONCAT(content, '!')", "bin"),
                     ("status = 0", "int")],
             "tg_channel_message": [("COALESCE(reply_to_msg_id, -1)", "int"), ("IFNULL(media_type, 'none')", "str"),
                                    ("message_id - peer_id", "int"), ("LENGTH(text_body)", "int")]}
# Expressions over aggregates, computed by the proxy after the merge (exact
# decimal arithmetic); the last ones of each list are refused (AVG or a
# quotient inside further arithmetic, DIV) or fail (a DATETIME operand).
AGG_EXPRS = {"msg": ["COUNT(*) + 1", "MAX(seq) - MIN(seq)", "SUM(seq) / COUNT(*)", "MAX(msg_type) * 10",
                     "ROUND(AVG(seq), 2)", "ROUND(AVG(msg_id))", "IFNULL(MIN(status), -1) * 3", "COUNT(*) * 2.5",
                     "ROUND(SUM(sender_uid) / 7, 1)", "-SUM(seq) + COUNT(*) * 100", "SUM(conv_id) * 3",
                     "SUM(seq) / (COUNT(*) - 1)", "COALESCE(SUM(msg_type), 0) / 4", "MAX(conv_id) - MIN(conv_id)",
                     "AVG(seq) * 2", "SUM(seq) / COUNT(*) * 2", "COUNT(*) DIV 2", "MAX(created_at) + 0"],
             "tg_channel_message": ["COUNT(*) - COUNT(media_type)", "MAX(message_id) - MIN(message_id)",
                                    "SUM(message_id) / COUNT(*)", "IFNULL(SUM(reply_to_msg_id), 0) / 3",
                                    "COALESCE(MAX(reply_to_msg_id), MIN(message_id), 0) - 1",
                                    "ROUND(AVG(reply_to_msg_id), 3)", "SUM(reply_to_msg_id) / COUNT(reply_to_msg_id)",
                                    "COUNT(DISTINCT media_type) * 10", "AVG(message_id) + 1"]}
UNIQUE = {"msg": [{"conv_id", "seq"}, {"msg_id"}], "tg_channel_message": [{"message_id"}]}
GROUPABLE = {"msg": ["msg_type", "status", "sender_uid", "conv_id"],
             "tg_channel_message": ["media_type", "message_month", "peer_id"]}
SUMMABLE = {"msg": ["seq", "msg_id", "sender_uid", "msg_type", "status", "conv_id"],
            "tg_channel_message": ["message_id", "reply_to_msg_id", "peer_id"]}


class Generator:
    def __init__(self, rng, data):
        self.rng = rng
        self.data = data

    # ---------------- WHERE ----------------
    def _key_filter(self, table, keyless_ok):
        r = self.rng
        key = "conv_id" if table == "msg" else "peer_id"
        present = self.data.conv_ids if table == "msg" else self.data.peer_ids
        absent = self.data.absent_conv_ids if table == "msg" else self.data.absent_peer_ids
        pick = r.random()
        if keyless_ok and pick < 0.35:
            return None
        if pick < 0.6:
            return f"{key} = {r.choice(present if r.random() < 0.9 else absent)}"
        values = r.sample(present, r.randrange(2, 7))
        if r.random() < 0.3:
            values.append(r.choice(absent))
        if r.random() < 0.1:
            values.append("NULL")
        r.shuffle(values)
        if r.random() < 0.25:  # the same keys as a disjunction, some disjuncts with conditions of their own
            parts = []
            for v in values:
                extra = r.random()
                if extra < 0.25 and table == "msg":
                    parts.append(f"({key} = {v} AND seq > {r.randrange(0, 60)})")
                elif extra < 0.35:
                    parts.append(f"({key} = {v} OR {key} = {r.choice(present)})")
                else:
                    parts.append(f"{key} = {v}")
            return "(" + " OR ".join(parts) + ")"
        return f"{key} IN ({', '.join(str(v) for v in values)})"

    def _month_bounds(self):
        r = self.rng
        i = r.randrange(len(MONTHS))
        j = min(len(MONTHS) - 1, i + r.randrange(0, 12))
        a, b = MONTHS[i], MONTHS[j]
        form = r.randrange(4)
        if form == 0:
            return f"message_month BETWEEN '{a}' AND '{b}'"
        if form == 1:
            nxt = datetime.date(b.year + (b.month == 12), b.month % 12 + 1, 1)
            return f"message_month >= '{a}' AND message_month < '{nxt}'"
        if form == 2:
            t0 = datetime.datetime(a.year, a.month, r.randrange(1, 28), r.randrange(24), r.randrange(60))
            t1 = datetime.datetime(b.year, b.month, r.randrange(1, 28), r.randrange(24), r.randrange(60), 0,
                                   r.randrange(1000) * 1000)
            return f"message_time >= '{t0}' AND message_time < '{t1.isoformat(sep=' ')}'"
        months = sorted(r.sample(MONTHS[i:j + 1], min(j - i + 1, r.randrange(1, 4))))
        return "message_month IN (" + ", ".join(f"'{m}'" for m in months) + ")"

    def _extra_filter(self, table):
        r = self.rng
        if table == "msg":
            return r.choice([
                lambda: f"seq > {r.randrange(0, 60)}",
                lambda: f"seq BETWEEN {r.randrange(0, 30)} AND {r.randrange(20, 90)}",
                lambda: f"msg_type = {r.randrange(1, 5)}",
                lambda: f"status IN ({r.randrange(0, 3)}, {r.randrange(0, 3)})",
                lambda: f"sender_uid = {r.choice(self.data.senders)}",
                lambda: f"created_at < '2025-0{r.randrange(4, 10)}-15 12:00:00'",
                lambda: "seq > 1000000",  # empty: aggregates over nothing
                lambda: f"content LIKE '{r.choice(WORDS)}%'",
            ])()
        return r.choice([
            lambda: "media_type IS NULL",
            lambda: f"media_type = '{r.choice(MEDIA)}'",
            lambda: "reply_to_msg_id IS NOT NULL",
            lambda: f"message_id > {r.randrange(100, 20000)}",
            lambda: "edited_at IS NOT NULL",
            lambda: "text_body IS NULL",
            lambda: "message_id < 0",  # empty
        ])()

    def _where(self, table, keyless_ok):
        parts = []
        key = self._key_filter(table, keyless_ok)
        if key:
            parts.append(key)
        if table == "tg_channel_message":
            parts.append(self._month_bounds())
        for _ in range(self.rng.choice([0, 0, 1, 1, 2])):
            parts.append(self._extra_filter(table))
        self.rng.shuffle(parts)
        return (" WHERE " + " AND ".join(parts)) if parts else ""

    # ---------------- SELECT shapes ----------------
    def generate(self):
        r = self.rng
        table = r.choice(["msg", "msg", "tg_channel_message"])
        shape = r.random()
        if shape < 0.5:
            return self._aggregate(table)
        if shape < 0.85:
            return self._rows(table, distinct=False)
        if shape < 0.96:
            return self._rows(table, distinct=True)
        return self._nested()

    def _nested(self):
        """msg in a subquery, derived table or UNION branch, every use on one
        shard (routed whole), or on two shards (refused: 9113)."""
        r = self.rng
        k = r.choice(self.data.conv_ids)
        same = [c for c in self.data.conv_ids if c % 16 == k % 16 and c != k]
        k2 = r.choice(same) if same and r.random() < 0.6 else k
        pick = r.random()
        if pick < 0.15:
            sql = (f"SELECT conv_id, seq, msg_id FROM msg WHERE conv_id = {k} "
                   f"AND seq = (SELECT MAX(seq) FROM msg AS m2 WHERE m2.conv_id = {k2})")
            return Query(sql, "msg", False, False, [], set())
        if pick < 0.3:  # correlated: the inner key equals the outer one
            sql = (f"SELECT m.conv_id, m.seq, m.msg_type FROM msg AS m WHERE m.conv_id = {k} "
                   f"AND m.seq + 3 >= (SELECT MAX(m2.seq) FROM msg AS m2 WHERE m2.conv_id = m.conv_id "
                   f"AND m2.msg_type = m.msg_type) ORDER BY m.seq")
            return Query(sql, "msg", True, False, [1], set())
        if pick < 0.55:
            sql = (f"SELECT COUNT(*), SUM(seq), MAX(msg_type) FROM (SELECT seq, msg_type FROM msg "
                   f"WHERE conv_id IN ({k}, {k2}) AND seq > {r.randrange(0, 60)}) AS t")
            return Query(sql, "msg", True, False, [0, 1, 2], set())
        if pick < 0.8:
            sql = (f"SELECT seq, msg_id FROM msg WHERE conv_id = {k} UNION ALL "
                   f"SELECT seq, msg_id FROM msg WHERE conv_id = {k2} ORDER BY msg_id LIMIT {r.randrange(1, 40)}")
            return Query(sql, "msg", True, True, [1], set())
        other = next(c for c in self.data.conv_ids if c % 16 != k % 16)
        sql = f"SELECT seq FROM msg WHERE conv_id = {k} AND seq IN (SELECT seq FROM msg WHERE conv_id = {other})"
        return Query(sql, "msg", False, False, [], set())

    def _limit(self):
        r = self.rng
        if r.random() < 0.6:
            return ""
        n, m = r.randrange(0, 30), r.randrange(0, 40)
        return r.choice([f" LIMIT {n}", f" LIMIT {m}, {n}", f" LIMIT {n} OFFSET {m}"])

    def _aggregate_expr(self, table):
        r = self.rng
        cols = TG if table == "tg_channel_message" else MSG
        summable = SUMMABLE[table]
        op = r.choice(["COUNT(*)", "COUNT", "SUM", "MIN", "MAX", "AVG", "COUNT_DISTINCT", "SUM_DISTINCT"])
        if op == "COUNT(*)":
            return "COUNT(*)"
        if op in ("SUM", "AVG"):
            return f"{op}({r.choice(summable)})"
        if op == "COUNT_DISTINCT":
            return f"COUNT(DISTINCT {r.choice(list(cols))})"
        if op == "SUM_DISTINCT":
            return f"SUM(DISTINCT {r.choice(summable)})"
        col = r.choice(list(cols))
        if op in ("MIN", "MAX") and cols[col][0] == "str":
            # MIN/MAX of a ci text column: ties under the collation are never
            # generated (WORDS are distinct case-insensitively), so the value is exact.
            pass
        return f"{op}({col})"

    @staticmethod
    def _aggregate_kind(agg, cols):
        """'int' for numeric results, else the argument's kind (MIN/MAX of dt/date/str/bin)."""
        op, _, arg = agg.partition("(")
        arg = arg.rstrip(")")
        if op in ("MIN", "MAX") and arg in cols:
            return cols[arg][0]
        return "int"

    def _having_literal(self, kind):
        """A HAVING literal for an aggregate of `kind`, often of another type:
        the proxy must coerce as MariaDB does (numbers against text and
        DATETIME, date-only and digit strings against DATETIME, quoted numbers
        against numbers); float literals must be refused (9113)."""
        r = self.rng
        pick = r.random()
        if pick < 0.12:  # a number whatever the kind
            return r.choice(["0", "1", "2", "5", "10", "50", "1000", "-3", "2.5", "TRUE", "20250301", "250301"])
        if pick < 0.17:
            return r.choice(["1e3", "2.5e0"])  # refused: floating-point literal
        if pick < 0.27:  # a string whatever the kind
            return r.choice(["'5'", "'10.0'", "' 7'", "'12abc'", "'audio'", "'2025-03-01'", "''", "'Banana'"])
        if kind == "int":
            return r.choice(["0", "1", "2", "5", "10", "50", "1000", "2.50", "18446744073709551615",
                             "36893488147419103230"])
        if kind == "dt":
            day = r.choice(["01", "01 00:00:00", "01 00:00:00.000", f"{r.randrange(1, 29):02} {r.randrange(24):02}:30:00.500",
                            f"{r.randrange(1, 29):02}T{r.randrange(24):02}:30", "31", "01 24:00:00"])
            return r.choice([f"'2025-{r.randrange(1, 13):02}-{day}'", f"'2025-{r.randrange(1, 13)}-1'",
                             f"2025{r.randrange(1, 13):02}01", f"'2025{r.randrange(1, 13):02}01'", "'2025-03'"])
        if kind == "date":
            return r.choice([f"'2025-{r.randrange(1, 13):02}-{r.choice(['01', '15'])}'",
                             f"'2025-{r.randrange(1, 13):02}-01 00:00:01'", f"2025{r.randrange(1, 13):02}01"])
        return f"'{r.choice(WORDS + MEDIA)}{r.choice(['', '', '  '])}'"

    def _aggregate(self, table):
        r = self.rng
        cols = TG if table == "tg_channel_message" else MSG
        where = self._where(table, keyless_ok=True)
        groups = r.sample(GROUPABLE[table], r.choice([0, 0, 1, 1, 1, 2]))
        aggs = [self._aggregate_expr(table) for _ in range(r.randrange(1, 4))]
        if r.random() < 0.7:  # at most one DISTINCT argument: the planner refuses several
            seen = False
            kept = []
            for a in aggs:
                if "DISTINCT" in a:
                    if seen:
                        continue
                    seen = True
                kept.append(a)
            aggs = kept
        items, names = [], []  # names[i]: how ORDER BY may refer to output i
        for g in groups:
            items.append(g)
            names.append(g)
        for i, a in enumerate(aggs):
            if r.random() < 0.5:
                alias = f"a{i}"
                items.append(f"{a} AS {alias}")
                names.append(alias)
            else:
                items.append(a)
                names.append(a)
        if r.random() < 0.2:  # arithmetic over aggregates (computed by the proxy; some shapes refused)
            expr = r.choice(AGG_EXPRS[table])
            if r.random() < 0.5:
                items.append(f"{expr} AS x")
                names.append("x")
            else:
                items.append(expr)
                names.append(expr)
        if groups and r.random() < 0.3:  # group columns after the aggregates
            items = items[len(groups):] + items[:len(groups)]
            names = names[len(groups):] + names[:len(groups)]
        sql = f"SELECT {', '.join(items)} FROM {table}{where}"
        if groups:
            sql += " GROUP BY " + ", ".join(groups)
        if r.random() < 0.3:
            j = r.randrange(len(aggs))
            ref = names[items.index(next(x for x in items if x.startswith(aggs[j])))]
            op = r.choice([">", ">=", "<", "<=", "=", "<>"])
            lit = self._having_literal(self._aggregate_kind(aggs[j], cols))
            sql += f" HAVING {ref} {op} {lit}"
        order_terms, order_cols, covered = [], [], set()
        if r.random() < 0.7:
            candidates = list(range(len(items)))
            for idx in r.sample(candidates, r.randrange(1, len(candidates) + 1)):
                how = r.random()
                term = str(idx + 1) if how < 0.25 else names[idx]
                order_terms.append(term + r.choice(["", " ASC", " DESC"]))
                order_cols.append(idx)
                covered.add(names[idx])
            if r.random() < 0.15:  # an aggregate that is not selected
                order_terms.append(self._aggregate_expr(table) + " DESC")
                order_cols.append(None)
        if order_terms:
            sql += " ORDER BY " + ", ".join(order_terms)
        limit = self._limit()
        sql += limit
        total = (not groups) or set(groups) <= covered
        ci = {i for i, n in enumerate(names) if n in cols and cols[n][0] == "str"}
        return Query(sql, table, total and bool(order_terms or not groups), bool(limit), order_cols, ci)

    def _rows(self, table, distinct):
        r = self.rng
        cols = TG if table == "tg_channel_message" else MSG
        where = self._where(table, keyless_ok=r.random() < 0.05)
        names = list(cols)
        star = not distinct and r.random() < 0.2
        if star:
            chosen = names[:]
            items = ["*"]
            refs = names[:]
        else:
            chosen = r.sample(names, r.randrange(1, 4 if distinct else len(names) + 1))
            items, refs = [], []
            for i, c in enumerate(chosen):
                if r.random() < 0.3:
                    items.append(f"{c} AS c{i}")
                    refs.append(f"c{i}")
                else:
                    items.append(c)
                    refs.append(c)
        if not star and r.random() < 0.25:  # a computed column, ordered by its alias
            expr, kind = r.choice(ROW_EXPRS[table])
            items.append(f"{expr} AS e")
            refs.append("e")
            chosen.append("e")
            cols = dict(cols, e=(kind, True))
        sql = f"SELECT {'DISTINCT ' if distinct else ''}{', '.join(items)} FROM {table}{where}"
        order_terms, order_cols, covered = [], [], set()
        if r.random() < 0.75:
            pool = chosen if distinct else names
            for c in r.sample(pool, r.randrange(1, min(4, len(pool)) + 1)):
                if c in chosen:
                    idx = chosen.index(c)
                    how = r.random()
                    term = str(idx + 1) if how < 0.2 else (refs[idx] if how < 0.6 else c)
                    order_cols.append(idx)
                else:
                    term = c
                    order_cols.append(None)
                order_terms.append(term + r.choice(["", " ASC", " DESC"]))
                covered.add(c)
            # often complete the order with a unique key so full sequences are compared
            if not distinct and r.random() < 0.5:
                for c in sorted(r.choice(UNIQUE[table])):
                    if c not in covered:
                        order_terms.append(c + r.choice(["", " DESC"]))
                        order_cols.append(chosen.index(c) if c in chosen else None)
                        covered.add(c)
        if order_terms:
            sql += " ORDER BY " + ", ".join(order_terms)
        limit = self._limit()
        sql += limit
        unique_rows = any(u <= covered for u in UNIQUE[table])
        total = bool(order_terms) and (unique_rows or (distinct and set(chosen) <= covered))
        ci = {i for i, c in enumerate(chosen) if cols[c][0] == "str"}
        return Query(sql, table, total, bool(limit), order_cols, ci)
