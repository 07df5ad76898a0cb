"""The logical catalog, allow lists and schema drift (issue 14, parts 1 and 3).

Through the proxy against the real backends; every answer is compared with
what MariaDB itself says about the physical table behind it:
- SHOW TABLES / SHOW FULL TABLES / SHOW TABLE STATUS / information_schema
  show logical tables (msg, not msg_00 .. msg_15), with the server's metadata;
- SHOW CREATE TABLE / DESCRIBE / SHOW COLUMNS / SHOW INDEX of a logical table
  answer from its first physical table with the logical name;
- SQLAlchemy reflection sees one database;
- users[].allow_tables / allow_schemas refuse with MariaDB's 1142 / 1044,
  worded as MariaDB words them for a real account without the grant;
- SHOW SCHEMA DRIFT on the admin port reports a physical table altered on a
  backend, and a scatter over shards whose columns differ is refused (9005).
"""
import os
import re
import unittest

import pymysql

from . import sptest

ADMIN_PORT = int(os.environ.get("SP_ADMIN_PORT", "16034"))
LOGICAL = ("msg", "tg_channel_message", "user_read_cursor", "user_sync_cursor")
PHYSICAL = re.compile(r"^(msg_\d\d|user_read_cursor_\d\d|user_sync_cursor_\d\d|tg_channel_message_s\d\d)$")


def rows(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return list(cur.fetchall())


def described(conn, sql):
    """(rows, [(name, type_code)] of the result) as PyMySQL sees them."""
    with conn.cursor() as cur:
        cur.execute(sql)
        return list(cur.fetchall()), [(d[0], d[1]) for d in cur.description]


def admin():
    return pymysql.connect(host=sptest.HOST, port=ADMIN_PORT, user="admin", password="admin_pw",
                           connect_timeout=10, read_timeout=60)


class LogicalCatalog(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.app = sptest.proxy()
        cls.db0 = sptest.direct(sptest.DB0_PORT)
        cls.tooling = sptest.proxy(user="tooling", password="tooling_pw")

    @classmethod
    def tearDownClass(cls):
        for c in (cls.app, cls.db0, cls.tooling):
            c.close()

    def direct_unsharded(self):
        """The tables of im on db0 that are not physical shard tables (what the app may see besides the logical ones)."""
        return {name for (name,) in rows(self.db0, "SHOW TABLES") if not PHYSICAL.match(name) and name not in LOGICAL}

    def test_show_tables_lists_logical_tables(self):
        got, meta = described(self.app, "SHOW TABLES")
        names = [name for (name,) in got]
        self.assertEqual(len(names), len(set(names)), "each table once")
        for logical in LOGICAL:
            self.assertIn(logical, names)
        self.assertEqual([n for n in names if PHYSICAL.match(n)], [], "physical tables hidden")
        self.assertEqual(set(names) - set(LOGICAL), self.direct_unsharded())
        # The server's column metadata, unchanged.
        _, direct_meta = described(self.db0, "SHOW TABLES")
        self.assertEqual(meta, direct_meta)
        self.assertEqual(meta[0][0], "Tables_in_im")

    def test_show_tables_like_and_full(self):
        self.assertEqual(rows(self.app, "SHOW TABLES LIKE 'msg'"), [("msg",)])
        self.assertEqual(rows(self.app, "SHOW TABLES LIKE 'msg_0%'"), [])
        self.assertIn(("msg",), rows(self.app, "SHOW TABLES LIKE 'ms%'"))
        full, meta = described(self.app, "SHOW FULL TABLES WHERE Tables_in_im = 'tg_channel_message'")
        self.assertEqual(full, [("tg_channel_message", "BASE TABLE")])
        self.assertEqual([m[0] for m in meta], ["Tables_in_im", "Table_type"])
        status = rows(self.app, "SHOW TABLE STATUS LIKE 'user_read_cursor'")
        self.assertEqual([r[0] for r in status], ["user_read_cursor"])

    def test_show_create_table_is_the_logical_ddl(self):
        got, meta = described(self.app, "SHOW CREATE TABLE msg")
        (direct,), direct_meta = described(self.db0, "SHOW CREATE TABLE msg_00")
        self.assertEqual(meta, direct_meta)
        self.assertEqual(got[0][0], "msg")
        expected = re.sub(r" AUTO_INCREMENT=\d+", "", direct[1].replace("CREATE TABLE `msg_00`", "CREATE TABLE `msg`", 1))
        self.assertEqual(got[0][1], expected)
        self.assertTrue(got[0][1].startswith("CREATE TABLE `msg` ("), got[0][1][:40])
        self.assertNotIn("msg_00", got[0][1])
        # Month partitioning is shown as the logical table has it (every shard has the same months).
        (tg,) = rows(self.app, "SHOW CREATE TABLE im.`tg_channel_message`")
        self.assertTrue(tg[1].startswith("CREATE TABLE `tg_channel_message` ("), tg[1][:60])
        self.assertIn("PARTITION BY RANGE", tg[1])

    def test_describe_and_show_columns_and_index(self):
        for proxied, physical in (("DESCRIBE msg", "DESCRIBE msg_00"), ("DESC msg conv_id", "DESC msg_00 conv_id"),
                                  ("SHOW COLUMNS FROM msg", "SHOW COLUMNS FROM msg_00"),
                                  ("SHOW FULL COLUMNS FROM msg FROM im", "SHOW FULL COLUMNS FROM msg_00 FROM im"),
                                  ("EXPLAIN user_read_cursor", "EXPLAIN user_read_cursor_00")):
            with self.subTest(proxied):
                self.assertEqual(described(self.app, proxied), described(self.db0, physical))
        got, meta = described(self.app, "SHOW INDEX FROM msg")
        direct, direct_meta = described(self.db0, "SHOW INDEX FROM msg_00")
        self.assertEqual(meta, direct_meta)
        self.assertTrue(got)
        self.assertEqual({r[0] for r in got}, {"msg"})
        self.assertEqual([r[1:] for r in got], [r[1:] for r in direct])

    def test_information_schema_tables_columns_statistics(self):
        names = [n for (n,) in rows(self.app, "SELECT TABLE_NAME FROM information_schema.TABLES "
                                              "WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME")]
        self.assertEqual(len(names), len(set(names)))
        self.assertEqual(set(names), set(LOGICAL) | self.direct_unsharded())
        got, meta = described(self.app, "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES "
                                        "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'msg'")
        self.assertEqual(got, [("msg", "BASE TABLE")])
        _, direct_meta = described(self.db0, "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES "
                                              "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'msg_00'")
        self.assertEqual(meta, direct_meta)
        columns_sql = ("SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_TYPE, IS_NULLABLE, COLUMN_KEY "
                       "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'im' AND TABLE_NAME = '{}' "
                       "ORDER BY ORDINAL_POSITION")
        got = rows(self.app, columns_sql.format("msg"))
        direct = rows(self.db0, columns_sql.format("msg_00"))
        self.assertTrue(direct)
        self.assertEqual(got, [("msg",) + r[1:] for r in direct])
        # Unfiltered: every logical table's columns once, from one physical table.
        everything = rows(self.app, "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS "
                                    "WHERE TABLE_SCHEMA = DATABASE()")
        msg_columns = [c for t, c in everything if t == "msg"]
        self.assertEqual(msg_columns, [r[1] for r in direct])
        self.assertFalse([t for t, _ in everything if PHYSICAL.match(t)])
        stats_sql = ("SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE FROM "
                     "information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{}' "
                     "ORDER BY INDEX_NAME, SEQ_IN_INDEX")
        got = rows(self.app, stats_sql.format("user_sync_cursor"))
        direct = rows(self.db0, stats_sql.format("user_sync_cursor_00"))
        self.assertTrue(direct)
        self.assertEqual(got, [("user_sync_cursor",) + r[1:] for r in direct])

    def test_information_schema_as_the_default_database(self):
        """USE information_schema; SELECT ... FROM TABLES / STATISTICS names the same catalog without the
        word in the text: logical tables only (before: the physical ones)."""
        c = sptest.proxy()
        try:
            rows(c, "USE information_schema")
            names = {n for (n,) in rows(c, "SELECT TABLE_NAME FROM TABLES WHERE TABLE_SCHEMA = 'im'")}
            self.assertEqual(names, set(LOGICAL) | self.direct_unsharded())
            stats = {t for (t,) in rows(c, "SELECT DISTINCT TABLE_NAME FROM `STATISTICS` WHERE TABLE_SCHEMA = 'im'")}
            self.assertIn("msg", stats)
            self.assertFalse([t for t in stats if PHYSICAL.match(t)], stats)
            with c.cursor(pymysql.cursors.Cursor) as cur:
                cur.execute("SELECT COUNT(*) FROM TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s", ("im", "msg_00"))
                self.assertEqual(cur.fetchall(), ((0,),))
        finally:
            c.close()

    def test_physical_tables_users_see_the_physical_layout(self):
        names = {n for (n,) in rows(self.tooling, "SHOW TABLES")}
        self.assertIn("msg_00", names)
        self.assertNotIn("msg", names)
        self.assertEqual(rows(self.tooling, "SELECT COUNT(*) FROM information_schema.TABLES "
                                            "WHERE TABLE_SCHEMA = 'im' AND TABLE_NAME = 'msg_00'"), [(1,)])
        # The same question from an application: no such table.
        self.assertEqual(rows(self.app, "SELECT COUNT(*) FROM information_schema.TABLES "
                                        "WHERE TABLE_SCHEMA = 'im' AND TABLE_NAME = 'msg_00'"), [(0,)])

    def test_sql_prepare_of_a_catalog_statement_is_refused(self):
        # EXECUTE would run on a backend and list msg_00 .. msg_15.
        for text in ("SHOW TABLES", "DESCRIBE msg",
                     "SELECT table_name FROM information_schema.TABLES WHERE table_schema = ?"):
            with self.assertRaises(pymysql.MySQLError) as ctx:
                rows(self.app, "PREPARE s FROM %s", (text,))
            self.assertEqual(ctx.exception.args[0], 1235, ctx.exception.args)
            self.assertIn("catalog statement", ctx.exception.args[1])
        # Other statements are still prepared; users of the physical layout prepare anything.
        rows(self.app, "PREPARE s FROM 'SELECT 1 + ?'")
        rows(self.app, "SET @a = 41")
        self.assertEqual(rows(self.app, "EXECUTE s USING @a"), [(42,)])
        rows(self.tooling, "PREPARE t FROM 'SHOW TABLES'")
        self.assertIn(("msg_00",), rows(self.tooling, "EXECUTE t"))

    def test_sqlalchemy_reflection(self):
        try:
            import sqlalchemy
        except ImportError:
            self.fail("python3-sqlalchemy is not installed (scripts/install-deps.sh installs it)")
        url = f"mysql+pymysql://app:app_pw@{sptest.HOST}:{sptest.PROXY_PORT}/im"
        engine = sqlalchemy.create_engine(url)
        direct_engine = sqlalchemy.create_engine(
            f"mysql+pymysql://{sptest.BACKEND_USER}:{sptest.BACKEND_PASSWORD}@127.0.0.1:{sptest.DB0_PORT}/im")
        try:
            inspector = sqlalchemy.inspect(engine)
            direct = sqlalchemy.inspect(direct_engine)
            tables = inspector.get_table_names()
            for logical in LOGICAL:
                self.assertIn(logical, tables)
            self.assertFalse([t for t in tables if PHYSICAL.match(t)], tables)
            self.assertTrue(inspector.has_table("msg"))
            self.assertFalse(inspector.has_table("msg_00"))
            for logical, physical in (("msg", "msg_00"), ("tg_channel_message", "tg_channel_message_s00")):
                columns = [(c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(logical)]
                self.assertTrue(columns)
                self.assertEqual(columns, [(c["name"], str(c["type"]), c["nullable"])
                                           for c in direct.get_columns(physical)])
                self.assertEqual(inspector.get_pk_constraint(logical)["constrained_columns"],
                                 direct.get_pk_constraint(physical)["constrained_columns"])
                self.assertEqual(sorted((i["name"], tuple(i["column_names"])) for i in inspector.get_indexes(logical)),
                                 sorted((i["name"], tuple(i["column_names"])) for i in direct.get_indexes(physical)))
            metadata = sqlalchemy.MetaData()
            table = sqlalchemy.Table("msg", metadata, autoload_with=engine)
            self.assertIn("conv_id", table.c)
        finally:
            engine.dispose()
            direct_engine.dispose()


class AllowLists(unittest.TestCase):
    """User `limited` (tests/integration/shardproxy.test.yaml.in): msg, im.tg_channel_message, it_allow_*; schema im."""

    GRANTEE = "it_allow_probe"

    @classmethod
    def setUpClass(cls):
        cls.limited = sptest.proxy(user="limited", password="limited_pw")
        cls.root = sptest.root(sptest.DB0_PORT)
        # A real MariaDB account with the same rights, to compare the wording with.
        sptest.query(cls.root, f"DROP USER IF EXISTS '{cls.GRANTEE}'@'127.0.0.1'")
        sptest.query(cls.root, f"CREATE USER '{cls.GRANTEE}'@'127.0.0.1' IDENTIFIED BY 'probe_pw'")
        sptest.query(cls.root, f"GRANT SELECT, INSERT ON im.msg_00 TO '{cls.GRANTEE}'@'127.0.0.1'")
        cls.probe = pymysql.connect(host="127.0.0.1", port=sptest.DB0_PORT, user=cls.GRANTEE, password="probe_pw",
                                    database="im", autocommit=True)
        sptest.query(cls.root, "CREATE TABLE IF NOT EXISTS im.it_allow_scratch (id INT)")

    @classmethod
    def tearDownClass(cls):
        cls.limited.close()
        cls.probe.close()
        sptest.query(cls.root, f"DROP USER IF EXISTS '{cls.GRANTEE}'@'127.0.0.1'")
        sptest.query(cls.root, "DROP TABLE IF EXISTS im.it_allow_scratch")
        cls.root.close()

    def refused(self, conn, sql):
        code, sqlstate, message = sptest.capture_sqlstate(lambda: sptest.query(conn, sql))
        return code, sqlstate, message

    def test_allowed_tables_work(self):
        self.assertIsNotNone(sptest.scalar(self.limited, "SELECT COUNT(*) FROM msg WHERE conv_id = 5"))
        self.assertEqual(sptest.scalar(
            self.limited, "WITH recent AS (SELECT id FROM it_allow_scratch) SELECT COUNT(*) FROM recent"), 0)
        self.assertIsNotNone(sptest.scalar(self.limited, "SELECT COUNT(*) FROM information_schema.CHARACTER_SETS"))

    def test_a_shape_another_user_made_hot_is_still_checked_against_these_lists(self):
        # The plan cache is per worker thread and shared by every user: once
        # `app` has run this passthrough shape on every worker (several
        # connections, each statement twice), `limited` must still be refused.
        sptest.query(self.root, "CREATE TABLE IF NOT EXISTS im.it_rights_hot (id INT)")
        sptest.query(self.root, "INSERT INTO im.it_rights_hot VALUES (4)")
        apps = [sptest.proxy() for _ in range(6)]
        try:
            for conn in apps:
                for value in (4, 5):
                    sptest.scalar(conn, f"SELECT COUNT(*) FROM it_rights_hot WHERE id = {value}")
            self.assertEqual(sptest.scalar(apps[0], "SELECT COUNT(*) FROM it_rights_hot WHERE id = 4"), 1)
            sessions = [sptest.proxy(user="limited", password="limited_pw") for _ in range(4)]
            try:
                for conn in sessions:  # each may land on another worker
                    code, sqlstate, message = self.refused(conn, "SELECT COUNT(*) FROM it_rights_hot WHERE id = 6")
                    self.assertEqual((code, sqlstate), (1142, "42000"), message)
                    self.assertIn("it_rights_hot", message)
            finally:
                for conn in sessions:
                    conn.close()
        finally:
            for conn in apps:
                conn.close()
            sptest.query(self.root, "DROP TABLE IF EXISTS im.it_rights_hot")

    def test_table_outside_the_list_is_1142_as_mariadb_words_it(self):
        # MariaDB's own words for an account without the grant:
        code, sqlstate, server = self.refused(self.probe, "SELECT * FROM user_read_cursor_03")
        self.assertEqual((code, sqlstate), (1142, "42000"))
        for sql, command, table in (("SELECT * FROM user_read_cursor WHERE uid = 3", "SELECT", "user_read_cursor"),
                                    ("SELECT * FROM msg m JOIN user_sync_cursor u ON u.uid = m.sender_uid "
                                     "WHERE m.conv_id = 5", "SELECT", "user_sync_cursor"),
                                    ("INSERT INTO user_read_cursor (uid) VALUES (3)", "INSERT", "user_read_cursor"),
                                    ("INSERT user_read_cursor (uid) VALUES (3)", "INSERT", "user_read_cursor"),
                                    ("UPDATE user_read_cursor SET uid = 3 WHERE uid = 3", "UPDATE", "user_read_cursor"),
                                    ("DELETE FROM user_read_cursor WHERE uid = 3", "DELETE", "user_read_cursor"),
                                    ("INSERT INTO msg (conv_id) SELECT uid FROM user_read_cursor WHERE uid = 3",
                                     "SELECT", "user_read_cursor"),
                                    ("SHOW CREATE TABLE user_read_cursor", "SHOW", "user_read_cursor"),
                                    ("DESCRIBE user_read_cursor", "SELECT", "user_read_cursor"),
                                    ("SHOW INDEX FROM user_read_cursor", "SELECT", "user_read_cursor")):
            with self.subTest(sql):
                code, sqlstate, message = self.refused(self.limited, sql)
                self.assertEqual((code, sqlstate), (1142, "42000"), message)
                self.assertEqual(message, server.replace("SELECT", command, 1)
                                 .replace(self.GRANTEE, "limited").replace("user_read_cursor_03", table))

    def test_schema_outside_the_list_is_1044(self):
        # MariaDB: 1142 for a table of a schema without grants, 1044 for the schema itself.
        code, sqlstate, server_table = self.refused(self.probe, "SELECT * FROM mysql.user")
        self.assertEqual((code, sqlstate), (1142, "42000"))
        for sql in ("SELECT * FROM mysql.user", "SELECT * FROM msg JOIN mysql.user d WHERE conv_id = 5"):
            with self.subTest(sql):
                self.assertEqual(self.refused(self.limited, sql),
                                 (1142, "42000", server_table.replace(self.GRANTEE, "limited")))
        code, _, server_use = self.refused(self.probe, "USE mysql")
        self.assertEqual(code, 1044)
        expected = server_use.replace(self.GRANTEE, "limited")
        code, _, server_show = self.refused(self.probe, "SHOW TABLES FROM mysql")
        self.assertEqual(server_show, server_use)
        for sql in ("USE mysql", "SHOW TABLES FROM mysql", "SHOW TABLE STATUS IN mysql"):
            with self.subTest(sql):
                self.assertEqual(self.refused(self.limited, sql), (1044, "42000", expected))
        code, sqlstate, message = sptest.capture_sqlstate(lambda: self.limited.select_db("mysql"))  # COM_INIT_DB
        self.assertEqual((code, sqlstate, message), (1044, "42000", expected))
        code, sqlstate, message = sptest.capture_sqlstate(
            lambda: sptest.proxy(user="limited", password="limited_pw", database="mysql"))
        self.assertEqual((code, sqlstate, message), (1044, "42000", expected))
        self.assertEqual(sptest.scalar(self.limited, "SELECT DATABASE()"), "im")  # unchanged

    def test_catalog_shows_only_allowed_tables(self):
        names = {n for (n,) in rows(self.limited, "SHOW TABLES")}
        self.assertIn("it_allow_scratch", names)
        self.assertEqual(names - {n for n in names if n.startswith("it_allow_")}, {"msg", "tg_channel_message"})
        names = {n for (n,) in rows(self.limited, "SELECT TABLE_NAME FROM information_schema.TABLES "
                                                  "WHERE TABLE_SCHEMA = 'im'")}
        self.assertEqual(names - {n for n in names if n.startswith("it_allow_")}, {"msg", "tg_channel_message"})


class SchemaDrift(unittest.TestCase):
    """msg_05 (db0) is altered as root; the admin port and a scatter see it."""

    def setUp(self):
        self.root = sptest.root(sptest.DB0_PORT, database="im")
        self.admin = admin()
        self.app = sptest.proxy()

    def tearDown(self):
        sptest.query(self.root, "ALTER TABLE msg_05 DROP COLUMN IF EXISTS it_drift_extra")
        columns = [c for (c,) in rows(self.root, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE "
                                                 "TABLE_SCHEMA = 'im' AND TABLE_NAME = 'msg_05'")]
        if "it_drift_status" in columns:
            sptest.query(self.root, "ALTER TABLE msg_05 RENAME COLUMN it_drift_status TO status")
        self.assertEqual(rows(self.admin, "SHOW SCHEMA DRIFT"), [], "drift left behind")
        for c in (self.root, self.admin, self.app):
            c.close()

    def drift(self):
        with self.admin.cursor() as cur:
            cur.execute("SHOW SCHEMA DRIFT")
            self.assertEqual([d[0] for d in cur.description],
                             ["table", "physical_table", "backend", "difference", "reference"])
            return list(cur.fetchall())

    def test_no_drift_on_the_test_schema(self):
        self.assertEqual(self.drift(), [])

    def test_added_column_is_reported_and_scatter_refused(self):
        sptest.query(self.root, "ALTER TABLE msg_05 ADD COLUMN it_drift_extra INT NULL")
        found = self.drift()
        self.assertEqual(len(found), 1, found)
        table, physical, backend, difference, reference = found[0]
        self.assertEqual((table, physical, backend), ("msg", "msg_05", "db0"))
        self.assertIn("extra column it_drift_extra", difference)
        self.assertEqual(reference, "db0.msg_00")
        # Five shards, one of which has a column more: refused, not merged.
        code, _, message = sptest.capture_sqlstate(lambda: sptest.query(
            self.app, "SELECT * FROM msg WHERE conv_id IN (1, 2, 3, 4, 5)"))
        self.assertEqual(code, 9005, message)
        self.assertIn("columns", message)

    def test_renamed_column_same_count_refused_not_mislabeled(self):
        sptest.query(self.root, "ALTER TABLE msg_05 RENAME COLUMN status TO it_drift_status")
        found = self.drift()
        self.assertTrue(any(r[1] == "msg_05" and "status" in r[3] for r in found), found)
        code, _, message = sptest.capture_sqlstate(lambda: sptest.query(
            self.app, "SELECT * FROM msg WHERE conv_id IN (4, 5)"))
        self.assertEqual(code, 9005, message)
        self.assertIn("it_drift_status", message)
        self.assertIn("SHOW SCHEMA DRIFT", message)

    def test_start_up_log_reports_the_check(self):
        if not sptest.PROXY_LOG:
            self.fail("SP_PROXY_LOG is not set (ctest sets it)")
        with open(sptest.PROXY_LOG, encoding="utf-8", errors="replace") as f:
            log = f.read()
        self.assertRegex(log, r"schema drift check: the physical tables of \d+ logical tables agree|schema drift: ")


if __name__ == "__main__":
    unittest.main()
