"""Access control through the proxy (issue 14, docs/security.md): the
statement policy per user, physical shard tables private, hashed passwords.

Users of the test config (shardproxy.test.yaml.in): app (allow_ddl), hashed
(password_hash only, no DDL), dba (privileged), tooling (physical_tables).
Statements that would hurt the shared cluster if the proxy let them through
are chosen to be harmless there (a GRANT the backend account already has, a
SET GLOBAL to the current value), except SHUTDOWN and SET PASSWORD, which the
issue reports as they happened.
"""
import unittest
import uuid

import pymysql
from pymysql.constants import CLIENT

from . import sptest


def session(user="app", password="app_pw", **kwargs):
    return sptest.proxy(user=user, password=password, client_flag=CLIENT.MULTI_STATEMENTS, **kwargs)


class StatementPolicy(unittest.TestCase):
    def setUp(self):
        self.conn = session()

    def tearDown(self):
        self.conn.close()

    def refused(self, sql, conn=None):
        return sptest.capture_sqlstate(lambda: sptest.query(conn or self.conn, sql))

    def assertRefused(self, sql, code, sqlstate, text, conn=None):
        got_code, got_state, message = self.refused(sql, conn)
        self.assertEqual((got_code, got_state), (code, sqlstate), f"{sql}: {message}")
        self.assertIn(text, message, sql)
        return message

    def assertSessionWorks(self, conn=None):
        self.assertEqual(sptest.scalar(conn or self.conn, "SELECT 1"), 1)

    def test_set_password_refused_and_backend_account_still_works(self):
        self.assertRefused("SET PASSWORD = PASSWORD('x')", 1044, "42000",
                           "Access denied for user 'app'@'127.0.0.1' to database 'mysql'")
        self.assertRefused("SET PASSWORD FOR 'proxy'@'%' = PASSWORD('x')", 1044, "42000", "database 'mysql'")
        # The proxy's own account still logs in to the backends: fresh
        # sessions through the proxy and directly.
        direct = sptest.direct()
        try:
            self.assertSessionWorks(direct)
        finally:
            direct.close()
        for _ in range(3):
            other = session()
            try:
                self.assertSessionWorks(other)
            finally:
                other.close()
        self.assertSessionWorks()

    def test_shutdown_refused(self):
        self.assertRefused("SHUTDOWN", 1227, "42000",
                           "Access denied; you need (at least one of) the SHUTDOWN privilege(s) for this operation")
        self.assertRefused("/*!shutdown */", 1227, "42000", "SHUTDOWN")
        self.assertSessionWorks()

    def test_set_global_refused(self):
        current = sptest.scalar(self.conn, "SELECT @@global.lock_wait_timeout")
        for sql in (f"SET GLOBAL lock_wait_timeout = {current}",
                    f"SET @@global.lock_wait_timeout = {current}",
                    f"set autocommit = 1, global lock_wait_timeout = {current}",
                    f"SELECT 1; SET GLOBAL lock_wait_timeout = {current}"):
            with self.subTest(sql=sql):
                self.assertRefused(sql, 1227, "42000", "the SUPER privilege(s)")
        self.assertSessionWorks()

    def test_grant_refused(self):
        self.assertRefused("GRANT SELECT ON im.* TO 'proxy'@'127.0.0.1'", 1227, "42000", "GRANT OPTION")
        self.assertRefused("REVOKE SELECT ON im.* FROM 'proxy'@'127.0.0.1'", 1227, "42000", "GRANT OPTION")
        self.assertRefused("CREATE USER it_access_nobody IDENTIFIED BY 'x'", 1227, "42000", "CREATE USER")

    def test_server_files_refused(self):
        self.assertRefused("SELECT LOAD_FILE('/etc/passwd')", 1227, "42000", "the FILE privilege(s)")
        self.assertRefused("SELECT content FROM msg WHERE conv_id = 1 AND content = load_file ('/etc/passwd')",
                           1227, "42000", "FILE")
        path = f"/tmp/it_access_{uuid.uuid4().hex[:8]}"
        self.assertRefused(f"SELECT 1 INTO OUTFILE '{path}'", 1227, "42000", "the FILE privilege(s)")
        self.assertRefused(f"SELECT 1 INTO DUMPFILE '{path}'", 1227, "42000", "FILE")
        self.assertRefused("LOAD DATA INFILE '/etc/passwd' INTO TABLE msg", 1227, "42000", "FILE")

    def test_administration_refused(self):
        for sql, text in (("FLUSH TABLES", "RELOAD"), ("RESET QUERY CACHE", "RELOAD"),
                          ("PURGE BINARY LOGS BEFORE NOW()", "BINLOG ADMIN"),
                          ("STOP SLAVE", "REPLICATION SLAVE ADMIN")):
            with self.subTest(sql=sql):
                self.assertRefused(sql, 1227, "42000", text)
        self.assertRefused("INSTALL SONAME 'ha_blackhole'", 1142, "42000",
                           "INSERT command denied to user 'app'@'127.0.0.1' for table `mysql`.`plugin`")
        self.assertRefused("CREATE DATABASE it_access_nope", 1044, "42000", "to database 'it_access_nope'")
        self.assertRefused("DROP DATABASE im", 1044, "42000", "to database 'im'")

    def test_dynamic_sql(self):
        self.assertRefused("PREPARE s FROM 'SHUTDOWN'", 1227, "42000", "SHUTDOWN")
        self.assertRefused("EXECUTE IMMEDIATE 'SET PASSWORD = PASSWORD(''x'')'", 1044, "42000", "'mysql'")
        self.assertRefused("PREPARE s FROM @q", 9117, "42000", "not a string literal")
        sptest.query(self.conn, "PREPARE s FROM 'SELECT 41 + 1'")
        self.assertEqual(sptest.scalar(self.conn, "EXECUTE s"), 42)

    def test_no_backslash_escapes_cannot_hide_a_statement(self):
        current = sptest.scalar(self.conn, "SELECT @@global.lock_wait_timeout")
        sptest.query(self.conn, "SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'")
        # Under NO_BACKSLASH_ESCAPES the string ends at the second quote.
        self.assertRefused(f"SELECT '\\'; SET GLOBAL lock_wait_timeout = {current}; -- '", 1227, "42000", "SUPER")
        self.assertSessionWorks()

    def test_ddl_needs_allow_ddl(self):
        table = sptest.unique_name("it_access")
        hashed = session("hashed", "hashed_pw")
        try:
            self.assertRefused(f"CREATE TABLE {table} (id INT)", 1142, "42000",
                               f"CREATE command denied to user 'hashed'@'127.0.0.1' for table `im`.`{table}`",
                               conn=hashed)
            self.assertRefused("CREATE PROCEDURE it_access_p() SELECT 1", 1044, "42000", "to database 'im'",
                               conn=hashed)
            self.assertRefused("TRUNCATE msg", 1142, "42000", "DROP command denied", conn=hashed)
            # Temporary tables are the session's own.
            sptest.query(hashed, "CREATE TEMPORARY TABLE it_access_tmp (id INT)")
            sptest.query(hashed, "DROP TEMPORARY TABLE it_access_tmp")
            # app has allow_ddl.
            sptest.query(self.conn, f"CREATE TABLE {table} (id INT)")
            sptest.query(self.conn, f"DROP TABLE {table}")
            # ... but a stored program cannot carry a refused statement.
            self.assertRefused("CREATE PROCEDURE it_access_p() BEGIN SELECT 1; SHUTDOWN; END", 1227, "42000",
                               "SHUTDOWN")
        finally:
            hashed.close()
            direct = sptest.direct()
            try:
                sptest.query(direct, f"DROP TABLE IF EXISTS {table}")
            finally:
                direct.close()


class PhysicalTables(unittest.TestCase):
    CONV = 5  # msg_05 on db0 (conf/shard_map.yaml: conv_id % 16)

    def setUp(self):
        self.seq = uuid.uuid4().int % 10**12
        self.msg_id = uuid.uuid4().int % 10**15

    def tearDown(self):
        direct = sptest.direct()
        try:
            # Any conv_id: on code without the rule a row for conv 7 lands here too.
            sptest.query(direct, "DELETE FROM msg_05 WHERE seq = %s AND content = %s", (self.seq, "it_access"))
        finally:
            direct.close()

    def insert_sql(self, conv):
        return (f"INSERT INTO msg_05 (conv_id, seq, msg_id, sender_uid, content) "
                f"VALUES ({conv}, {self.seq}, {self.msg_id}, 1, 'it_access')")

    def test_application_user_refused(self):
        conn = session()
        try:
            code, sqlstate, message = sptest.capture_sqlstate(lambda: sptest.query(conn, self.insert_sql(7)))
            self.assertEqual((code, sqlstate), (9116, "42000"), message)
            self.assertIn("msg_05 is a physical shard table of msg", message)
            code, _, _ = sptest.capture_sqlstate(lambda: sptest.query(conn, "SELECT COUNT(*) FROM `MSG_05`"))
            self.assertEqual(code, 9116)
            # The logical table works as always.
            self.assertEqual(sptest.scalar(conn, f"SELECT COUNT(*) FROM msg WHERE conv_id = {self.CONV} "
                                                 f"AND seq = {self.seq}"), 0)
        finally:
            conn.close()
        direct = sptest.direct()
        try:
            self.assertEqual(sptest.scalar(direct, "SELECT COUNT(*) FROM msg_05 WHERE seq = %s", (self.seq,)), 0)
        finally:
            direct.close()

    def test_privileged_and_tooling_users_allowed(self):
        dba = session("dba", "dba_pw")
        try:
            sptest.query(dba, self.insert_sql(self.CONV))
        finally:
            dba.close()
        tooling = session("tooling", "tooling_pw")
        try:
            self.assertEqual(sptest.scalar(tooling, f"SELECT COUNT(*) FROM msg_05 WHERE seq = {self.seq}"), 1)
            # physical_tables alone does not lift the statement policy.
            code, _, _ = sptest.capture_sqlstate(lambda: sptest.query(tooling, "SHUTDOWN"))
            self.assertEqual(code, 1227)
        finally:
            tooling.close()
        app = session()
        try:
            self.assertEqual(sptest.scalar(app, f"SELECT COUNT(*) FROM msg WHERE conv_id = {self.CONV} "
                                                f"AND seq = {self.seq}"), 1)
        finally:
            app.close()


class HashedPassword(unittest.TestCase):
    def test_login_with_hashed_password(self):
        conn = session("hashed", "hashed_pw")
        try:
            self.assertEqual(sptest.scalar(conn, "SELECT CURRENT_USER() IS NOT NULL"), 1)
            self.assertEqual(sptest.scalar(conn, "SELECT DATABASE()"), "im")
        finally:
            conn.close()

    def test_wrong_password_is_1045(self):
        for password in ("hashed_px", "", "*29AF6DF3480449CA3F70BD0153CFBE082A7A29F9"):
            with self.subTest(password=password):
                code, sqlstate, message = sptest.capture_sqlstate(
                    lambda: session("hashed", password).close())
                self.assertEqual((code, sqlstate), (1045, "28000"))
                self.assertIn("Access denied for user 'hashed'", message)

    def test_no_password_or_hash_in_the_log(self):
        if not sptest.PROXY_LOG:
            self.skipTest("SP_PROXY_LOG not set")
        conn = session()
        try:
            sptest.capture_sqlstate(lambda: sptest.query(conn, "SET PASSWORD = PASSWORD('it_secret_pw')"))
        finally:
            conn.close()
        sptest.capture_sqlstate(lambda: session("hashed", "it_wrong_secret").close())
        with open(sptest.PROXY_LOG, encoding="utf-8", errors="replace") as f:
            log = f.read()
        for secret in ("app_pw", "hashed_pw", "29AF6DF3480449CA3F70BD0153CFBE082A7A29F9", "proxy_pw",
                       "it_secret_pw", "it_wrong_secret"):
            self.assertNotIn(secret, log)
        self.assertIn("SET PASSWORD refused by the statement policy", log)

if __name__ == "__main__":
    unittest.main()
