"""The admin port and the shard-map lifecycle against the real proxy and backends.

Run by ctest as integration.admin (tests/integration/admin.cmake), or by hand:
  cd tests/integration && SP_PROXY_BINARY=../../build/proxy/shardproxy /usr/bin/python3 -m unittest -v admin_test
"""
import glob
import os
import time
import unittest

import pymysql

import admin_proxy as ap

V1 = dict(s01="0-31", s02="32-63")
V2 = dict(s01="0-16,18-31", s02="17,32-63")  # bucket 17 moved from s01 (db0) to s02 (db1)
KEY17 = ap.keys_in_bucket(17, 1)[0]
KEY3 = ap.keys_in_bucket(3, 1)[0]


def version_in_force():
    c = ap.admin()
    try:
        r = ap.dict_rows(c, "SHOW SHARD MAP")
        versions = {row["version"] for row in r}
        assert len(versions) == 1, versions
        return int(versions.pop())
    finally:
        c.close()


class AdminTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ap.create_tables()
        cls.run_ = ap.ProxyRun("admin_test")
        cls.run_.write_map(ap.map_text(1, **V1))
        cls.run_.start()

    @classmethod
    def tearDownClass(cls):
        cls.run_.stop()
        ap.drop_tables()

    def setUp(self):
        # Each test starts from the proxy's current state; make sure it is still alive.
        self.assertTrue(self.run_.alive(), self.run_.log_tail())

    def reload(self):
        c = ap.admin()
        try:
            return ap.dict_rows(c, "RELOAD SHARD MAP")[0]
        finally:
            c.close()

    def bump(self, **shards):
        version = version_in_force() + 1
        self.run_.write_map(ap.map_text(version, **shards))
        return version

    # ---- login ----

    def test_admin_login_and_app_accounts_refused(self):
        c = ap.admin()
        self.assertEqual(ap.rows(c, "SHOW SESSIONS")[0][3], "1")
        c.close()
        with self.assertRaises(pymysql.err.OperationalError) as e:
            ap.admin(user=ap.APP_USER, password=ap.APP_PASSWORD)
        self.assertEqual(e.exception.args[0], 1045)
        with self.assertRaises(pymysql.err.OperationalError) as e:
            ap.admin(password="wrong")
        self.assertEqual(e.exception.args[0], 1045)
        # Admin credentials are not application credentials either.
        with self.assertRaises(pymysql.err.OperationalError) as e:
            pymysql.connect(host=ap.HOST, port=ap.PORT, user=ap.ADMIN_USER, password=ap.ADMIN_PASSWORD)
        self.assertEqual(e.exception.args[0], 1045)

    def test_command_out_of_sequence_is_1156_and_closes(self):
        c = ap.admin()
        sock = c._sock
        sock.sendall(b"\x01\x00\x00\x03\x0e")  # COM_PING with sequence id 3
        header = sock.recv(4)
        self.assertEqual(len(header), 4)
        self.assertEqual(header[3], 0)  # under the id the proxy expected, as MariaDB
        payload = b""
        while len(payload) < header[0]:
            payload += sock.recv(header[0] - len(payload))
        self.assertEqual(payload[:3], b"\xff\x84\x04")  # 1156
        self.assertIn(b"Got packets out of order", payload)
        self.assertEqual(sock.recv(1), b"")  # closed
        c._sock = None

    def test_mariadb_cli(self):
        code, out, err = ap.cli("select @@version_comment limit 1; SHOW SHARD MAP; HELP")
        self.assertEqual(code, 0, err)
        self.assertIn("shardproxy admin", out)
        self.assertIn("it_admin_chan_s01", out)
        self.assertIn("ROLLBACK SHARD MAP TO <version>", out)
        code, out, err = ap.cli("show shard maps")
        self.assertEqual(code, 1)
        self.assertIn("ERROR 1064", err)
        self.assertIn("unknown command", err)
        code, out, err = ap.cli("SHOW SESSIONS", user=ap.APP_USER, password=ap.APP_PASSWORD)
        self.assertEqual(code, 1)
        self.assertIn("ERROR 1045", err)

    # ---- read-only commands ----

    def test_show_shard_map_backends_sessions_route(self):
        c = ap.admin()
        m = ap.dict_rows(c, "show shard map;")
        self.assertEqual([r["shard"] for r in m], ["s01", "s02"])
        self.assertEqual(len(m[0]["checksum"]), 64)
        self.assertEqual(m[0]["table"], ap.TABLE)
        self.assertEqual(m[0]["backend"], "db0")
        self.assertEqual(m[1]["backend"], "db1")
        self.assertEqual(m[0]["method"], "bucket")
        backends = {r["backend"]: r for r in ap.dict_rows(c, "SHOW BACKENDS")}
        self.assertEqual(backends["db0"]["address"], f"127.0.0.1:{ap.DB0_PORT}")
        self.assertEqual(backends["db1"]["state"], "up")
        self.assertEqual(int(backends["db0"]["pool_max"]), 32)
        app = ap.app()
        ap.rows(app, f"SELECT COUNT(*) FROM {ap.TABLE} WHERE peer_id = {KEY3}")
        self.assertGreaterEqual(int(ap.dict_rows(c, "SHOW SESSIONS")[0]["sessions"]), 1)
        stmt = f"SELECT body FROM {ap.TABLE} WHERE peer_id = {KEY17}"
        route = ap.rows(c, "SHOW ROUTE " + stmt)
        explain = ap.rows(app, "EXPLAIN SHARDS " + stmt)
        self.assertEqual(route, explain)
        app.close()
        c.close()

    # ---- reload ----

    def test_reload_valid_identical_and_invalid(self):
        app = ap.app()
        start = version_in_force()
        self.run_.write_map(ap.map_text(start + 1, **V2))
        r = self.reload()
        self.assertEqual(r["result"], "applied")
        self.assertEqual(int(r["new_version"]), start + 1)
        self.assertEqual(ap.route_backend(app, KEY17), ("s02", "db1"))
        # The same file again: a no-op that says so.
        r = self.reload()
        self.assertEqual(r["result"], "unchanged")
        self.assertIn("unchanged", r["message"])
        # Every problem listed; the map in force untouched.
        bad = ap.map_text(start + 2, s01="0-20", s02="17,32-62", s02_backend="db9",
                          hot_keys={KEY3: "s07"})
        self.run_.write_map(bad)
        c = ap.admin()
        with self.assertRaises(pymysql.err.MySQLError) as e:
            ap.rows(c, "RELOAD SHARD MAP")
        code, message = e.exception.args
        self.assertEqual(code, 1105)
        self.assertIn("refused", message)
        errors = [r[1] for r in ap.rows(c, "SHOW SHARD MAP ERRORS")]
        text = "\n".join(errors)
        self.assertIn("db9", text)        # undefined backend
        self.assertIn("s07", text)        # hot key to a shard that does not exist
        self.assertIn("17", text)         # bucket 17 mapped twice
        self.assertIn("63", text)         # bucket 63 not mapped
        self.assertGreaterEqual(len(errors), 4, text)
        self.assertTrue(all("map.yaml:" in p for p in errors), text)
        self.assertEqual(version_in_force(), start + 1)
        self.assertEqual(ap.route_backend(app, KEY17), ("s02", "db1"))
        # Malformed YAML, a typo'd key, a lower version: refused too.
        for text_, needle in (("version: 99\ntables: [\n", "map.yaml"),
                              (ap.map_text(start + 2, **V1).replace("key_prefix", "key_prefx"), "key_prefx"),
                              (ap.map_text(start, **V1), "greater than the running version")):
            self.run_.write_map(text_)
            code, out, err = ap.cli("RELOAD SHARD MAP")
            self.assertEqual(code, 1, out)
            self.assertIn(needle, err + "\n".join(r[1] for r in ap.rows(c, "SHOW SHARD MAP ERRORS")))
        self.assertEqual(version_in_force(), start + 1)
        c.close()
        app.close()

    def test_rollback_and_history(self):
        app = ap.app()
        v_old = version_in_force()
        old_route = ap.route_backend(app, KEY17)
        new_shards = V1 if old_route[0] == "s02" else V2
        v_new = self.bump(**new_shards)
        self.assertEqual(self.reload()["result"], "applied")
        self.assertNotEqual(ap.route_backend(app, KEY17), old_route)
        c = ap.admin()
        r = ap.dict_rows(c, f"ROLLBACK SHARD MAP TO {v_old}")[0]
        self.assertEqual(r["result"], "applied")
        self.assertEqual(int(r["new_version"]), v_old)
        self.assertEqual(ap.route_backend(app, KEY17), old_route)
        history = ap.dict_rows(c, "SHOW SHARD MAP HISTORY")
        self.assertEqual(int(history[0]["version"]), v_old)
        self.assertEqual(history[0]["applied_by"], "admin:admin")
        self.assertEqual(history[0]["note"], f"rollback to {v_old}")
        self.assertEqual(history[0]["in_force"], "yes")
        self.assertEqual(int(history[1]["version"]), v_new)
        with self.assertRaises(pymysql.err.MySQLError) as e:
            ap.rows(c, "ROLLBACK SHARD MAP TO 999")
        self.assertIn("not in the cache", e.exception.args[1])
        # The file still holds v_new, which is greater again: RELOAD re-applies it.
        self.assertEqual(self.reload()["result"], "applied")
        self.assertEqual(version_in_force(), v_new)
        c.close()
        app.close()

    def test_sighup_reloads(self):
        app = ap.app()
        old_route = ap.route_backend(app, KEY17)
        v = self.bump(**(V1 if old_route[0] == "s02" else V2))
        self.run_.hangup()
        deadline = time.monotonic() + 10
        while version_in_force() != v and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(version_in_force(), v)
        self.assertNotEqual(ap.route_backend(app, KEY17), old_route)
        c = ap.admin()
        self.assertEqual(ap.dict_rows(c, "SHOW SHARD MAP HISTORY")[0]["applied_by"], "sighup")
        c.close()
        self.assertIn(f"swapped by sighup: version {v - 1} -> {v}", self.run_.log())
        app.close()

    def test_hot_key_isolation(self):
        app = ap.app()
        route = ap.route_backend(app, KEY3)
        self.assertEqual(route, ("s01", "db0"))
        current = ap.dict_rows(ap.admin(), "SHOW SHARD MAP")
        s01 = next(r["buckets"] for r in current if r["shard"] == "s01")
        s02 = next(r["buckets"] for r in current if r["shard"] == "s02")
        v = version_in_force() + 1
        self.run_.write_map(ap.map_text(v, s01=s01, s02=s02, hot_keys={KEY3: "s02"}))
        self.assertEqual(self.reload()["result"], "applied")
        self.assertEqual(ap.route_backend(app, KEY3), ("s02", "db1"))
        m = ap.dict_rows(ap.admin(), "SHOW SHARD MAP")
        self.assertEqual(next(r["hot_keys"] for r in m if r["shard"] == "s02"), str(KEY3))
        self.run_.write_map(ap.map_text(v + 1, s01=s01, s02=s02))
        self.assertEqual(self.reload()["result"], "applied")
        self.assertEqual(ap.route_backend(app, KEY3), ("s01", "db0"))
        app.close()

    def test_add_and_remove_backend(self):
        app = ap.app()
        current = ap.dict_rows(ap.admin(), "SHOW SHARD MAP")
        s01 = next(r["buckets"] for r in current if r["shard"] == "s01")
        s02 = next(r["buckets"] for r in current if r["shard"] == "s02")
        v = version_in_force() + 1
        # db2 is a second name for the server behind db1 (the cluster has two servers).
        self.run_.write_config(f"  - {{name: db2, address: 127.0.0.1:{ap.DB1_PORT}, user: proxy, "
                               f"password: proxy_pw, database: im, max_connections: 8}}\n")
        self.run_.write_map(ap.map_text(v, s01=s01, s02=s02, s02_backend="db2"))
        try:
            r = self.reload()
            self.assertEqual(r["result"], "applied")
            self.assertEqual(r["backends_added"], "db2")
            key = ap.keys_in_bucket(40, 1)[0]
            self.assertEqual(ap.route_backend(app, key), ("s02", "db2"))
            ap.rows(app, f"INSERT INTO {ap.TABLE} (peer_id, msg_id, body) VALUES ({key}, 777001, 'via db2')")
            self.assertEqual(ap.rows(app, f"SELECT body FROM {ap.TABLE} WHERE peer_id = {key} AND msg_id = 777001"),
                             (("via db2",),))
            backends = {b["backend"]: b for b in ap.dict_rows(ap.admin(), "SHOW BACKENDS")}
            self.assertIn("db2", backends)
            self.assertEqual(int(backends["db2"]["pool_max"]), 8)  # 4 per worker, 2 workers
            self.assertGreaterEqual(int(backends["db2"]["connects"]), 1)
            # The replica monitor probes it too (before: only after a restart), so a dead
            # server behind it would be noticed: read_only is read at each probe.
            deadline = time.monotonic() + 10
            while True:
                db2 = next(b for b in ap.dict_rows(ap.admin(), "SHOW BACKENDS") if b["backend"] == "db2")
                if db2["read_only"] is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            self.assertIsNotNone(db2["read_only"], f"db2 never probed: {db2}")
        finally:
            # Remove it again: map back to db1 and db2 out of the config in one reload.
            self.run_.write_config()
            self.run_.write_map(ap.map_text(v + 1, s01=s01, s02=s02))
            r = self.reload()
        self.assertEqual(r["result"], "applied")
        self.assertEqual(r["backends_removed"], "db2")
        backends = {b["backend"]: b for b in ap.dict_rows(ap.admin(), "SHOW BACKENDS")}
        self.assertTrue("db2" not in backends or backends["db2"]["state"] == "draining", backends)
        self.assertEqual(ap.route_backend(app, ap.keys_in_bucket(40, 1)[0]), ("s02", "db1"))
        app.close()


def wait_for_log(run, text, timeout_s=10):
    """The start-up drift check runs after the listeners are up: its line comes a little later."""
    deadline = time.monotonic() + timeout_s
    while text not in run.log():
        if time.monotonic() > deadline:
            raise AssertionError(f"not in the log within {timeout_s}s: {text}\n{run.log_tail()}")
        time.sleep(0.1)


class StartupTest(unittest.TestCase):
    """Start-up with a missing map file (cache fallback) and with a corrupt cache."""

    @classmethod
    def setUpClass(cls):
        ap.create_tables()

    @classmethod
    def tearDownClass(cls):
        ap.drop_tables()

    def test_missing_map_file_uses_the_cache(self):
        run = ap.ProxyRun("startup_missing")
        run.write_map(ap.map_text(1, **V1))
        run.start()
        run.write_map(ap.map_text(2, **V2))
        c = ap.admin()
        ap.rows(c, "RELOAD SHARD MAP")
        c.close()
        self.assertEqual(run.stop(), 0)
        os.remove(run.map_path)
        run.start()
        try:
            self.assertEqual(version_in_force(), 2)
            app = ap.app()
            self.assertEqual(ap.route_backend(app, KEY17), ("s02", "db1"))
            app.close()
            log = run.log()
            self.assertIn("MISSING OR INVALID", log)
            self.assertIn("CACHED map: version 2", log)
        finally:
            run.stop()
        # No file and an empty cache: the proxy refuses to start, and says why.
        os.remove(run.cache_path)
        with self.assertRaises(RuntimeError) as e:
            run.start()
        self.assertIn("holds no map", str(e.exception))

    def test_corrupt_cache_with_a_good_file(self):
        run = ap.ProxyRun("startup_corrupt")
        run.write_map(ap.map_text(1, **V1))
        os.makedirs(os.path.dirname(run.cache_path))
        with open(run.cache_path, "wb") as f:
            f.write(b"definitely not sqlite " * 100)
        run.start()
        try:
            self.assertEqual(version_in_force(), 1)
            aside = glob.glob(run.cache_path + ".corrupt-*")
            self.assertEqual(len(aside), 1)
            self.assertIn("was corrupt", run.log())
            c = ap.admin()
            history = ap.dict_rows(c, "SHOW SHARD MAP HISTORY")
            self.assertEqual([h["applied_by"] for h in history], ["startup"])
            c.close()
        finally:
            run.stop()

    def test_schema_drift_is_logged_at_start_up_and_shown(self):
        """A physical table that differs: a warning at start-up, a row in SHOW SCHEMA DRIFT; the proxy runs."""
        db1 = ap.direct(ap.DB1_PORT)
        ap.rows(db1, f"ALTER TABLE {ap.TABLE}_s02 ADD COLUMN it_drift INT NULL, ADD INDEX it_drift_idx (msg_id)")
        run = ap.ProxyRun("startup_drift")
        run.write_map(ap.map_text(1, **V1))
        try:
            run.start()
            c = ap.admin()
            drift = ap.rows(c, "SHOW SCHEMA DRIFT")
            self.assertEqual(sorted(r[3] for r in drift),
                             ["extra column it_drift int(11) NULL DEFAULT NULL", "extra index it_drift_idx (msg_id)"])
            self.assertEqual({(r[0], r[1], r[2], r[4]) for r in drift},
                             {(ap.TABLE, f"{ap.TABLE}_s02", "db1", f"db0.{ap.TABLE}_s01")})
            c.close()
            # The mariadb CLI reads it too (it negotiates extended type info:
            # the reply once lacked it and the CLI said 2027, malformed packet; issue 30).
            code, out, err = ap.cli("SHOW SCHEMA DRIFT")
            self.assertEqual(code, 0, err)
            self.assertIn("extra column it_drift", out)
            wait_for_log(run, f"schema drift: table {ap.TABLE}: {ap.TABLE}_s02 on backend db1: extra column it_drift")
            app = ap.app()  # running: statements on the table still route
            self.assertEqual(ap.route_backend(app, KEY17), ("s01", "db0"))
            app.close()
        finally:
            run.stop()
            ap.rows(db1, f"ALTER TABLE {ap.TABLE}_s02 DROP COLUMN it_drift, DROP INDEX it_drift_idx")
            db1.close()
        run = ap.ProxyRun("startup_no_drift")
        run.write_map(ap.map_text(1, **V1))
        run.start()
        try:
            c = ap.admin()
            self.assertEqual(ap.rows(c, "SHOW SCHEMA DRIFT"), ())
            c.close()
            wait_for_log(run, "schema drift check: the physical tables of 1 logical tables agree")
        finally:
            run.stop()


if __name__ == "__main__":
    unittest.main()
