"""TLS on both sides of the proxy (issue 14, part 5), with real clients.

Starts its OWN shardproxy (free ports) whose clients may use TLS (the test
CA's proxy certificate, copied into the run directory so the reload test can
replace it) and whose backends are reached over TLS verified against the test
CA. The backends are the shared test cluster, started with `scripts/cluster up
--tls` (the integration.cluster_up fixture); the certificates are those
`scripts/tls-certs` made in <cluster dir>/tls. A second CA (made here) stands
for "the wrong CA".

Clients: PyMySQL (ssl=), the mariadb CLI (--ssl-verify-server-cert,
--default-auth=caching_sha2_password), Go (tls=custom, drivers/go/tls.go),
Connector/J (drivers/java/TlsIT.java), and raw sockets for a client that
starts TLS and stalls.
"""
import os
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import time
import unittest

import pymysql

import scatter_failure_proxy as sf

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER_DIR = os.environ.get("SP_CLUSTER_DIR", os.path.join(sf.REPO_ROOT, ".cluster"))
CERTS = os.path.join(CLUSTER_DIR, "tls")
CA = os.path.join(CERTS, "ca.pem")
TLS_CERTS_SCRIPT = os.path.join(sf.REPO_ROOT, "scripts", "tls-certs")
RUN_ROOT = os.path.join(os.path.dirname(sf.RUN_ROOT), "tls-run")
# The stalled-handshake test's proxy; the others keep the default 10 s (a cold
# JVM on a loaded machine can take over a second for its TLS handshake).
STALL_TIMEOUT_MS = 1000
HASHED_PW = "hashed_pw"  # users[].password_hash below is PASSWORD('hashed_pw')
HASHED_PW_HASH = "*29AF6DF3480449CA3F70BD0153CFBE082A7A29F9"


class TlsProxy(sf.ProxyRun):
    """A shardproxy with server.tls_cert/tls_key and backends[].tls (no shard map)."""

    def __init__(self, name, backend_ca, certs_dir, handshake_timeout_ms=10000, server_extra=""):
        self.dir = os.path.join(RUN_ROOT, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.port, self.admin_port = sf.free_ports(2)
        self.log_path = os.path.join(self.dir, "shardproxy.log")
        self.config_path = os.path.join(self.dir, "shardproxy.yaml")
        self.cert = os.path.join(self.dir, "proxy.pem")
        self.key = os.path.join(self.dir, "proxy-key.pem")
        install_proxy_cert(certs_dir, self.dir)
        backend_tls = f"tls: {{ca: {backend_ca}, verify: true}}"
        with open(self.config_path, "w") as f:
            f.write(f"""server:
  listen: {sf.HOST}:{self.port}
  admin_listen: {sf.HOST}:{self.admin_port}
  threads: 1
  shutdown_grace_ms: 2000
  handshake_timeout_ms: {handshake_timeout_ms}
  log_level: debug
  tls_cert: proxy.pem
  tls_key: proxy-key.pem
{server_extra}users:
  - {{name: app, password: app_pw, default_database: im}}
  - {{name: secure, password: secure_pw, default_database: im, require_tls: true}}
  - {{name: hashed, password_hash: "{HASHED_PW_HASH}", default_database: im}}
admin_users:
  - {{name: admin, password: admin_pw}}
backends:
  - {{name: db0, address: 127.0.0.1:{sf.DB0_PORT}, user: proxy, password: proxy_pw, database: im, connect_timeout_ms: 2000, {backend_tls}}}
  - {{name: db1, address: 127.0.0.1:{sf.DB1_PORT}, user: proxy, password: proxy_pw, database: im, connect_timeout_ms: 2000, {backend_tls}}}
default_backend: db0
""")
        self.proc = None

    def connect_as(self, user, password, tls_ca=None, port=None, database="im", **kw):
        if tls_ca:
            kw["ssl"] = {"ca": tls_ca, "check_hostname": True}
        return pymysql.connect(host=sf.HOST, port=port or self.port, user=user, password=password,
                               database=database, autocommit=True, connect_timeout=10, read_timeout=30, **kw)

    def admin(self, tls_ca=None):
        return self.connect_as("admin", "admin_pw", tls_ca=tls_ca, port=self.admin_port, database=None)

    def sessions(self):
        conn = self.admin()
        try:
            with conn.cursor(pymysql.cursors.DictCursor) as cur:
                cur.execute("SHOW SESSIONS")
                return cur.fetchone()
        finally:
            conn.close()

    def log_text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()


def install_proxy_cert(certs_dir, run_dir):
    for name in ("proxy.pem", "proxy-key.pem"):
        shutil.copyfile(os.path.join(certs_dir, name), os.path.join(run_dir, name))


def scalar(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        rows = cur.fetchall()
    assert len(rows) == 1, rows
    return rows[0][-1]


def mysql_error(fn):
    try:
        fn()
    except pymysql.err.MySQLError as e:
        return e
    raise AssertionError("expected the connection to fail, but it succeeded")


def mariadb_cli(port, user, password, *options, sql="SELECT 1"):
    cmd = ["mariadb", "--no-defaults", "-h127.0.0.1", f"-P{port}", f"-u{user}", f"-p{password}", "im",
           "--connect-timeout=10", *options, "-e", sql]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def read_packet(sock):
    header = b""
    while len(header) < 4:
        chunk = sock.recv(4 - len(header))
        if not chunk:
            raise ConnectionError("closed")
        header += chunk
    length = header[0] | header[1] << 8 | header[2] << 16
    payload = b""
    while len(payload) < length:
        chunk = sock.recv(length - len(payload))
        if not chunk:
            raise ConnectionError("closed")
        payload += chunk
    return header[3], payload


def ssl_request(seq=1):
    # CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH | CLIENT_SSL | LONG_PASSWORD
    caps = 0x200 | 0x8000 | 0x80000 | 0x800 | 0x1
    payload = struct.pack("<IIB", caps, 1 << 24, 45) + b"\0" * 23
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


class Tls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for port in (sf.DB0_PORT, sf.DB1_PORT):
            conn = sf.direct(port)
            try:
                have = sf.rows(conn, "SELECT @@have_ssl")[0][0]
            finally:
                conn.close()
            if have != "YES":
                raise AssertionError(f"backend {port} has have_ssl={have}: start the cluster with "
                                     f"`scripts/cluster up --tls` (the integration.cluster_up fixture does)")
        if not os.path.exists(CA):
            raise AssertionError(f"{CA} missing: scripts/tls-certs makes it")
        # The wrong CA: another CA with its own proxy certificate (also the reload test's new certificate).
        cls.other = os.path.join(RUN_ROOT, "other-ca")
        subprocess.run([TLS_CERTS_SCRIPT, "--force", cls.other], check=True, capture_output=True, timeout=60)
        cls.wrong_ca = os.path.join(cls.other, "ca.pem")
        cls.proxy = TlsProxy("main", backend_ca=CA, certs_dir=CERTS)
        cls.proxy.start()

    @classmethod
    def tearDownClass(cls):
        code = cls.proxy.stop()
        assert code == 0, f"the proxy exited with {code}:\n{cls.proxy.log_tail()}"

    # ---- clients of the proxy ----

    def test_a_pymysql_verified_tls_session_counted_by_the_admin_port(self):
        conn = self.proxy.connect_as("app", "app_pw", tls_ca=CA)
        plain = self.proxy.connect_as("app", "app_pw")
        try:
            self.assertIsInstance(conn._sock, ssl.SSLSocket)
            self.assertIn(conn._sock.version(), ("TLSv1.2", "TLSv1.3"))
            self.assertNotIsInstance(plain._sock, ssl.SSLSocket)
            self.assertEqual(scalar(conn, "SELECT 1"), 1)
            self.assertEqual(scalar(plain, "SELECT 2"), 2)
            # The proxy's side: one of its two sessions is encrypted. The admin
            # port offers TLS with the same certificate.
            admin = self.proxy.admin(tls_ca=CA)
            try:
                self.assertIsInstance(admin._sock, ssl.SSLSocket)
                with admin.cursor(pymysql.cursors.DictCursor) as cur:
                    cur.execute("SHOW SESSIONS")
                    row = cur.fetchone()
                self.assertEqual((row["sessions"], row["tls_sessions"]), ("2", "1"))
            finally:
                admin.close()
        finally:
            conn.close()
            plain.close()
        sf_wait(lambda: self.proxy.sessions()["tls_sessions"] == "0", "tls_sessions back to 0")

    def test_b_pymysql_wrong_ca_is_refused_by_the_client(self):
        e = mysql_error(lambda: self.proxy.connect_as("app", "app_pw", tls_ca=self.wrong_ca).close())
        self.assertIn("CERTIFICATE_VERIFY_FAILED", str(e))

    def test_c_require_tls_refuses_plaintext_with_mariadbs_1045(self):
        e = mysql_error(lambda: self.proxy.connect_as("secure", "secure_pw").close())
        self.assertEqual(e.args[0], 1045)
        # Word for word what MariaDB answers a REQUIRE SSL account over plaintext.
        user = "tls_required_probe"
        subprocess.run([sf.CLUSTER, "sql", str(sf.DB0_PORT),
                        f"CREATE OR REPLACE USER '{user}'@'127.0.0.1' IDENTIFIED BY 'probe_pw' REQUIRE SSL"],
                       check=True, capture_output=True, timeout=60,
                       env=dict(os.environ, SP_CLUSTER_DIR=CLUSTER_DIR))
        try:
            server = mysql_error(lambda: pymysql.connect(host="127.0.0.1", port=sf.DB0_PORT, user=user,
                                                         password="probe_pw", connect_timeout=10).close())
        finally:
            subprocess.run([sf.CLUSTER, "sql", str(sf.DB0_PORT), f"DROP USER IF EXISTS '{user}'@'127.0.0.1'"],
                           check=True, capture_output=True, timeout=60,
                           env=dict(os.environ, SP_CLUSTER_DIR=CLUSTER_DIR))
        self.assertEqual(server.args[0], 1045)
        self.assertEqual(e.args[1], server.args[1].replace(user, "secure"))
        self.assertIn("require_tls", self.proxy.log_text())
        # Over TLS the same account logs in.
        conn = self.proxy.connect_as("secure", "secure_pw", tls_ca=CA)
        try:
            self.assertEqual(scalar(conn, "SELECT 3"), 3)
        finally:
            conn.close()

    def test_d_mariadb_cli_verifies_the_proxy_certificate(self):
        ok = mariadb_cli(self.proxy.port, "app", "app_pw", "--ssl", f"--ssl-ca={CA}", "--ssl-verify-server-cert",
                         sql="status")
        self.assertEqual(ok.returncode, 0, ok.stderr)
        # The client's side of the session (mysql_get_ssl_cipher): \s prints the cipher.
        self.assertRegex(ok.stdout, r"SSL:\s+Cipher in use is \S+")
        bad = mariadb_cli(self.proxy.port, "app", "app_pw", "--ssl", f"--ssl-ca={self.wrong_ca}",
                          "--ssl-verify-server-cert")
        self.assertNotEqual(bad.returncode, 0)
        self.assertRegex(bad.stderr, r"(?i)certificate|SSL")
        plain = mariadb_cli(self.proxy.port, "app", "app_pw", "--skip-ssl", sql="status")
        self.assertEqual(plain.returncode, 0, plain.stderr)
        self.assertRegex(plain.stdout, r"SSL:\s+Not in use")

    def test_e_caching_sha2_full_authentication_over_tls(self):
        log_before = len(self.proxy.log_text())
        # A password_hash account: only full authentication (the password itself, through TLS) can check it.
        full = mariadb_cli(self.proxy.port, "hashed", HASHED_PW, "--ssl", f"--ssl-ca={CA}",
                           "--ssl-verify-server-cert", "--default-auth=caching_sha2_password", sql="SELECT 'full'")
        self.assertEqual(full.returncode, 0, full.stderr)
        self.assertIn("full", full.stdout)
        wrong = mariadb_cli(self.proxy.port, "hashed", "not_it", "--ssl", f"--ssl-ca={CA}",
                            "--default-auth=caching_sha2_password")
        self.assertNotEqual(wrong.returncode, 0)
        self.assertIn("1045", wrong.stderr)
        # A clear-text account: fast authentication (the scramble answer alone).
        fast = mariadb_cli(self.proxy.port, "app", "app_pw", "--ssl", f"--ssl-ca={CA}",
                           "--default-auth=caching_sha2_password", sql="SELECT 'fast'")
        self.assertEqual(fast.returncode, 0, fast.stderr)
        log = self.proxy.log_text()[log_before:]
        self.assertIn("caching_sha2_password full authentication", log)
        self.assertIn("caching_sha2_password fast authentication", log)
        # In plaintext the password must not travel: the client is switched to mysql_native_password.
        plain = mariadb_cli(self.proxy.port, "hashed", HASHED_PW, "--skip-ssl",
                            "--default-auth=caching_sha2_password", sql="SELECT 'native'")
        self.assertEqual(plain.returncode, 0, plain.stderr)

    def test_f_a_client_that_starts_tls_and_stalls_is_dropped(self):
        stall = TlsProxy("stall", backend_ca=CA, certs_dir=CERTS, handshake_timeout_ms=STALL_TIMEOUT_MS)
        stall.start()
        try:
            sock = socket.create_connection((sf.HOST, stall.port), timeout=10)
            try:
                read_packet(sock)  # the greeting
                sock.sendall(ssl_request())
                sock.sendall(b"\x16\x03\x01\x02\x00")  # a TLS record header announcing a ClientHello that never comes
                self.assertEqual(sock.recv(1), b"")  # closed by the proxy, before our 10 s socket timeout
            finally:
                sock.close()
            self.assertEqual(stall.sessions()["handshake_timeouts"], "1")
        finally:
            self.assertEqual(stall.stop(), 0)

    def test_g_go_driver_tls_custom(self):
        self.run_driver([os.path.join(HERE, "drivers", "run_go.sh"), "tls"], "go tls: ok")

    def test_h_connector_j_verify_ca(self):
        self.run_driver([os.path.join(HERE, "drivers", "run_java.sh"), "TlsIT"], "java tls: ok")

    def run_driver(self, cmd, ok_line):
        env = dict(os.environ, SP_TLS_PORT=str(self.proxy.port), SP_TLS_CA=CA, SP_TLS_WRONG_CA=self.wrong_ca)
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
        self.assertEqual(result.returncode, 0, f"{result.stdout}\n{result.stderr}")
        self.assertIn(ok_line, result.stdout)

    # ---- the proxy as a client of the backends ----

    def test_i_backend_connections_are_tls_verified_against_the_ca(self):
        conn = self.proxy.connect_as("app", "app_pw")
        try:
            # Answered by the backend about the proxy's own connection to it.
            cipher = scalar(conn, "SHOW SESSION STATUS LIKE 'Ssl_cipher'")
            version = scalar(conn, "SHOW SESSION STATUS LIKE 'Ssl_version'")
        finally:
            conn.close()
        self.assertTrue(cipher, "the proxy's backend connection is not encrypted")
        self.assertIn(version, ("TLSv1.2", "TLSv1.3"))

    def test_j_backend_with_the_wrong_ca_fails_clearly(self):
        wrong = TlsProxy("wrong-backend-ca", backend_ca=self.wrong_ca, certs_dir=CERTS)
        wrong.start()
        try:
            conn = wrong.connect_as("app", "app_pw")  # a backend that is down does not block the login
            try:
                e = mysql_error(lambda: scalar(conn, "SELECT 1"))
            finally:
                conn.close()
            self.assertIn("certificate verification failed", str(e))
            self.assertTrue(wrong.alive())
            # OpenSSL's reason follows (which one depends on the chain the server sends).
            self.assertIn(f"backend db0 (127.0.0.1:{sf.DB0_PORT}) connect failed: TLS to the backend: "
                          f"certificate verification failed: ", wrong.log_text())
        finally:
            self.assertEqual(wrong.stop(), 0)

    # ---- versions and ciphers offered (server.tls_version, server.tls_ciphers) ----

    def client_context(self, maximum=None, ciphers=None):
        ctx = ssl.create_default_context(cafile=CA)
        if maximum:
            ctx.maximum_version = maximum
        if ciphers:
            ctx.set_ciphers(ciphers)
        return ctx

    def test_k_tls_version_and_ciphers_are_what_clients_get(self):
        # TLS 1.3 only, with one suite: a TLS 1.2 client fails, a TLS 1.3 one gets that suite.
        only13 = TlsProxy("tls13", backend_ca=CA, certs_dir=CERTS,
                          server_extra="  tls_version: TLSv1.3\n  tls_ciphers: TLS_CHACHA20_POLY1305_SHA256\n")
        only13.start()
        try:
            with self.assertRaises((pymysql.err.OperationalError, ssl.SSLError)):
                pymysql.connect(host=sf.HOST, port=only13.port, user="app", password="app_pw", connect_timeout=10,
                                ssl=self.client_context(maximum=ssl.TLSVersion.TLSv1_2))
            conn = pymysql.connect(host=sf.HOST, port=only13.port, user="app", password="app_pw", connect_timeout=10,
                                   ssl=self.client_context())
            try:
                self.assertEqual(conn._sock.version(), "TLSv1.3")
                self.assertEqual(conn._sock.cipher()[0], "TLS_CHACHA20_POLY1305_SHA256")
                self.assertEqual(scalar(conn, "SELECT 1"), 1)
            finally:
                conn.close()
            self.assertGreaterEqual(int(only13.sessions()["tls_handshake_failures"]), 1)  # the TLS 1.2 client
        finally:
            self.assertEqual(only13.stop(), 0)
        # TLS 1.2 only, AES-128-GCM ciphers only (a client prefers AES-256 when it may choose).
        only12 = TlsProxy("tls12", backend_ca=CA, certs_dir=CERTS,
                          server_extra="  tls_version: TLSv1.2\n"
                                       "  tls_ciphers: ECDHE-RSA-AES128-GCM-SHA256:AES128-GCM-SHA256\n")
        only12.start()
        try:
            conn = pymysql.connect(host=sf.HOST, port=only12.port, user="app", password="app_pw", connect_timeout=10,
                                   ssl=self.client_context())
            try:
                self.assertEqual(conn._sock.version(), "TLSv1.2")
                self.assertEqual(conn._sock.cipher()[0], "ECDHE-RSA-AES128-GCM-SHA256")
            finally:
                conn.close()
        finally:
            self.assertEqual(only12.stop(), 0)

    def test_l_unusable_tls_settings_stop_the_proxy_at_start_up(self):
        cases = [("  tls_version: TLSv1.1\n", "'TLSv1.1' is not offered: TLSv1.2 and TLSv1.3 only"),
                 ("  tls_ciphers: NO-SUCH-CIPHER\n", "server.tls_ciphers 'NO-SUCH-CIPHER': no TLS 1.2 cipher"),
                 ("  tls_version: TLSv1.3\n  tls_ciphers: ECDHE-RSA-AES128-GCM-SHA256\n",
                  "names no TLS 1.3 suite")]
        for extra, message in cases:
            with self.subTest(extra=extra):
                bad = TlsProxy("tls-bad", backend_ca=CA, certs_dir=CERTS, server_extra=extra)
                with self.assertRaises(RuntimeError) as failed:
                    bad.start()
                self.assertIn(message, str(failed.exception))
                bad.stop()

    # ---- reload (last: it replaces the certificate) ----

    def test_z_sighup_reloads_the_certificate_sessions_continue(self):
        old_session = self.proxy.connect_as("app", "app_pw", tls_ca=CA)
        try:
            install_proxy_cert(self.other, self.proxy.dir)
            offset = len(self.proxy.log_text())
            self.proxy.proc.send_signal(signal.SIGHUP)
            sf_wait(lambda: "TLS certificate reloaded" in self.proxy.log_text()[offset:], "the reload")
            # New handshakes get the new certificate: the old CA no longer verifies it.
            e = mysql_error(lambda: self.proxy.connect_as("app", "app_pw", tls_ca=CA).close())
            self.assertIn("CERTIFICATE_VERIFY_FAILED", str(e))
            new_session = self.proxy.connect_as("app", "app_pw", tls_ca=self.wrong_ca)
            self.assertEqual(scalar(new_session, "SELECT 4"), 4)
            new_session.close()
            # The session from before goes on with the certificate it started with.
            self.assertEqual(scalar(old_session, "SELECT 5"), 5)
            # A broken key file: the reload is refused, the certificate in force stays.
            with open(self.proxy.key, "w") as f:
                f.write("not a key\n")
            offset = len(self.proxy.log_text())
            self.proxy.proc.send_signal(signal.SIGHUP)
            sf_wait(lambda: "TLS certificate not reloaded" in self.proxy.log_text()[offset:], "the refused reload")
            again = self.proxy.connect_as("app", "app_pw", tls_ca=self.wrong_ca)
            self.assertEqual(scalar(again, "SELECT 6"), 6)
            again.close()
        finally:
            old_session.close()


def sf_wait(predicate, what, timeout_s=10):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


if __name__ == "__main__":
    unittest.main()
