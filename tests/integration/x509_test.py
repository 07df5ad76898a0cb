"""Client certificates for proxy accounts: server.tls_ca, users[].require_x509 /
require_subject / require_issuer (MariaDB's REQUIRE X509 / SUBJECT / ISSUER).

Starts its OWN shardproxy (free ports) with tls_cert/tls_key/tls_ca, on the
shared test cluster started with `scripts/cluster up --tls` (the
integration.cluster_up fixture), whose mariadbd servers have ssl-ca = the same
test CA. Client certificates are made here with openssl: two signed by the
test CA (subjects "app client" and "someone else") and one self-signed with the
"app client" subject (not from the CA).

Every refusal is compared with a real mariadbd: accounts with the same
REQUIRE clauses are created on the db0 backend and the same clients (the
mariadb CLI with --ssl-cert/--ssl-key/--ssl-ca, PyMySQL with
ssl={'cert','key','ca'}) log in to both.
"""
import os
import shutil
import struct
import subprocess
import unittest

import pymysql
from pymysql import _auth

import scatter_failure_proxy as sf
import tls_test

CA = tls_test.CA
CA_KEY = os.path.join(tls_test.CERTS, "ca-key.pem")
RUN_ROOT = os.path.join(os.path.dirname(sf.RUN_ROOT), "x509-run")
CERTS = os.path.join(RUN_ROOT, "client-certs")
APP_SUBJECT = "/O=shardproxy tests/CN=app client"
OTHER_SUBJECT = "/O=shardproxy tests/CN=someone else"
CA_SUBJECT = "/CN=shardproxy test CA"  # scripts/tls-certs
WRONG_ISSUER = "/CN=another CA"
# The accounts, on the proxy and (same names, same REQUIRE) on db0.
ACCOUNTS = {
    "x_plain": ("", ""),
    "x_x509": ("require_x509: true", "REQUIRE X509"),
    "x_subject": (f'require_subject: "{APP_SUBJECT}"', f"REQUIRE SUBJECT '{APP_SUBJECT}'"),
    "x_issuer": (f'require_issuer: "{CA_SUBJECT}"', f"REQUIRE ISSUER '{CA_SUBJECT}'"),
    "x_wrong_issuer": (f'require_issuer: "{WRONG_ISSUER}"', f"REQUIRE ISSUER '{WRONG_ISSUER}'"),
}
PASSWORD = "x509_pw"


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


def make_client_certs():
    """app.pem (CA-signed, APP_SUBJECT), other.pem (CA-signed, OTHER_SUBJECT),
    selfsigned.pem (APP_SUBJECT, signed by its own key)."""
    shutil.rmtree(CERTS, ignore_errors=True)
    os.makedirs(CERTS)
    ext = os.path.join(CERTS, "client.ext")
    with open(ext, "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n")
    for name, subject in (("app", APP_SUBJECT), ("other", OTHER_SUBJECT)):
        key, csr, pem = (os.path.join(CERTS, f"{name}{s}") for s in ("-key.pem", ".csr", ".pem"))
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-sha256", "-subj", subject, "-keyout", key, "-out", csr)
        openssl("x509", "-req", "-in", csr, "-CA", CA, "-CAkey", CA_KEY, "-CAcreateserial", "-CAserial",
                os.path.join(CERTS, "ca.srl"), "-days", "30", "-sha256", "-extfile", ext, "-out", pem)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "30", "-subj", APP_SUBJECT,
            "-keyout", os.path.join(CERTS, "selfsigned-key.pem"), "-out", os.path.join(CERTS, "selfsigned.pem"))


def cert(name):
    return os.path.join(CERTS, f"{name}.pem"), os.path.join(CERTS, f"{name}-key.pem")


def cluster_sql(sql):
    subprocess.run([sf.CLUSTER, "sql", str(sf.DB0_PORT), sql], check=True, capture_output=True, timeout=60,
                   env=dict(os.environ, SP_CLUSTER_DIR=tls_test.CLUSTER_DIR))


class X509Proxy(tls_test.TlsProxy):
    """TlsProxy's certificate and backends, with server.tls_ca and the ACCOUNTS."""

    def __init__(self, name):
        super().__init__(name, backend_ca=CA, certs_dir=tls_test.CERTS, server_extra=f"  tls_ca: {CA}\n")
        users = "".join(f"  - {{name: {user}, password: {PASSWORD}{', ' + proxy_req if proxy_req else ''}}}\n"
                        for user, (proxy_req, _) in ACCOUNTS.items())
        with open(self.config_path) as f:
            text = f.read()
        with open(self.config_path, "w") as f:
            f.write(text.replace("users:\n", "users:\n" + users, 1))


def login(port, user, certificate=None, tls=True):
    """A PyMySQL login (no database: the db0 accounts have no grants)."""
    kw = {}
    if tls:
        kw["ssl"] = {"ca": CA}
        if certificate:
            kw["ssl"]["cert"], kw["ssl"]["key"] = cert(certificate)
    return pymysql.connect(host=sf.HOST, port=port, user=user, password=PASSWORD, connect_timeout=10,
                           read_timeout=30, **kw)


def login_error(port, user, certificate=None, tls=True):
    try:
        login(port, user, certificate, tls).close()
    except pymysql.err.MySQLError as e:
        return e
    raise AssertionError(f"{user} logged in to port {port} (certificate {certificate}, tls {tls})")


def cli(port, user, *extra, certificate=None):
    options = ["--ssl", f"--ssl-ca={CA}", *extra]
    if certificate:
        c, k = cert(certificate)
        options += [f"--ssl-cert={c}", f"--ssl-key={k}"]
    cmd = ["mariadb", "--no-defaults", "-h127.0.0.1", f"-P{port}", f"-u{user}", f"-p{PASSWORD}",
           "--connect-timeout=10", *options, "-N", "-e", "SELECT 'logged in'"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def change_user(conn, user):
    """COM_CHANGE_USER with mysql_native_password over the connection's greeting scramble."""
    auth = _auth.scramble_native_password(PASSWORD.encode(), conn.salt)
    payload = (user.encode() + b"\0" + bytes([len(auth)]) + auth + b"\0" + struct.pack("<H", 45) +
               b"mysql_native_password\0" + b"\0")  # empty connection attributes (CLIENT_CONNECT_ATTRS)
    conn._execute_command(0x11, payload)
    packet = conn._read_packet()  # raises the ERR
    if packet.is_auth_switch_request():  # mariadbd asks again with a new scramble
        salt = packet._data[packet._data.index(b"\0") + 1:].rstrip(b"\0")
        conn.write_packet(_auth.scramble_native_password(PASSWORD.encode(), salt))
        conn._read_packet()


class X509(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(CA_KEY):
            raise AssertionError(f"{CA_KEY} missing: scripts/tls-certs makes it (scripts/cluster up --tls)")
        make_client_certs()
        for user, (_, server_req) in ACCOUNTS.items():
            cluster_sql(f"CREATE OR REPLACE USER '{user}'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}' {server_req}")
        cls.proxy = X509Proxy("x509")
        cls.proxy.start()

    @classmethod
    def tearDownClass(cls):
        for user in ACCOUNTS:
            cluster_sql(f"DROP USER IF EXISTS '{user}'@'127.0.0.1'")
        code = cls.proxy.stop()
        assert code == 0, f"the proxy exited with {code}:\n{cls.proxy.log_tail()}"

    def both(self):
        return (("mariadbd", sf.DB0_PORT), ("proxy", self.proxy.port))

    def assert_logs_in(self, user, certificate=None, tls=True):
        for who, port in self.both():
            with self.subTest(who=who, user=user, certificate=certificate):
                conn = login(port, user, certificate, tls)
                try:
                    with conn.cursor() as cur:
                        cur.execute("SELECT 7")
                        self.assertEqual(cur.fetchone()[0], 7)
                finally:
                    conn.close()

    def assert_1045_like_mariadb(self, user, certificate=None, tls=True):
        server = login_error(sf.DB0_PORT, user, certificate, tls)
        proxy = login_error(self.proxy.port, user, certificate, tls)
        self.assertEqual(server.args[0], 1045, server)
        self.assertEqual(proxy.args[0], 1045, proxy)
        # Same text but the host part (mariadbd says 'localhost' for 127.0.0.1 with name resolution).
        self.assertTrue(proxy.args[1].startswith(f"Access denied for user '{user}'@"), proxy.args[1])
        self.assertTrue(proxy.args[1].endswith("(using password: YES)"), proxy.args[1])
        self.assertEqual(server.args[1].split("@")[0], proxy.args[1].split("@")[0])

    def test_a_accounts_without_a_requirement_log_in_without_a_certificate(self):
        self.assert_logs_in("x_plain")
        self.assert_logs_in("x_plain", tls=False)
        self.assert_logs_in("x_plain", certificate="app")

    def test_b_require_x509_without_a_certificate_is_1045(self):
        self.assert_1045_like_mariadb("x_x509")
        self.assert_1045_like_mariadb("x_x509", tls=False)
        log = self.proxy.log_text()
        self.assertIn("access denied for user 'x_x509'", log)
        self.assertIn("(require_x509: the client sent no certificate)", log)
        self.assertIn("(require_x509: the connection is not encrypted)", log)

    def test_c_a_certificate_from_the_ca_logs_in(self):
        for user in ("x_x509", "x_subject", "x_issuer"):
            self.assert_logs_in(user, certificate="app")
        self.assert_logs_in("x_x509", certificate="other")
        # The proxy's login line (debug) names the certificate's subject.
        self.assertIn(f"client certificate {OTHER_SUBJECT})", self.proxy.log_text())
        for who, port in self.both():
            with self.subTest(who=who):
                run = cli(port, "x_subject", certificate="app")
                self.assertEqual(run.returncode, 0, run.stderr)
                self.assertEqual(run.stdout.strip(), "logged in")

    def test_d_subject_and_issuer_must_match_whole(self):
        self.assert_1045_like_mariadb("x_subject", certificate="other")
        self.assert_1045_like_mariadb("x_subject")  # no certificate at all
        self.assert_1045_like_mariadb("x_wrong_issuer", certificate="app")
        log = self.proxy.log_text()
        self.assertIn(f"require_subject: the certificate's subject is '{OTHER_SUBJECT}', not '{APP_SUBJECT}'", log)
        self.assertIn(f"require_issuer: the certificate's issuer is '{CA_SUBJECT}', not '{WRONG_ISSUER}'", log)
        for who, port in self.both():
            with self.subTest(who=who):
                run = cli(port, "x_subject", certificate="other")
                self.assertEqual(run.returncode, 1)
                self.assertIn("ERROR 1045 (28000): Access denied for user 'x_subject'@", run.stderr)

    def test_e_a_certificate_not_from_the_ca_fails_the_tls_handshake(self):
        # mariadbd fails the TLS handshake itself (SSL_VERIFY_PEER), whatever
        # the account, even one that needs no certificate: never a 1045.
        # TLS 1.2: the certificate is judged inside the handshake, the client
        # sees the alert: mariadb CLI "ERROR 2026 (HY000): TLS/SSL error".
        for who, port in self.both():
            for user in ("x_x509", "x_plain"):
                run = cli(port, user, "--tls-version=TLSv1.2", certificate="selfsigned")
                self.assertEqual(run.returncode, 1, f"{who} {user}: {run.stdout}")
                self.assertTrue(run.stderr.startswith("ERROR 2026 (HY000): TLS/SSL error"), f"{who}: {run.stderr}")
        # TLS 1.3: the client has finished its side (and may have sent its
        # login) when the server's alert arrives, so what it reports is a
        # race, the same with mariadbd and the proxy (both seen in runs):
        # the CLI 2026 or 2013 (lost connection), PyMySQL 2013 or 2006.
        for who, port in self.both():
            for user in ("x_x509", "x_plain"):
                run = cli(port, user, certificate="selfsigned")
                self.assertEqual(run.returncode, 1, f"{who} {user}: {run.stdout}")
                self.assertIn(run.stderr.split(":")[0], ("ERROR 2026 (HY000)", "ERROR 2013 (HY000)"), run.stderr)
                e = login_error(port, user, certificate="selfsigned")
                self.assertIsInstance(e, pymysql.err.OperationalError)
                self.assertIn(e.args[0], (2013, 2006), f"{who} {user}: {e}")
        self.assertIn("certificate verification failed", self.proxy.log_text())

    def test_f_change_user_checks_the_certificate_too(self):
        for who, port in self.both():
            with self.subTest(who=who):
                with_cert = login(port, "x_plain", certificate="app")
                try:
                    change_user(with_cert, "x_subject")
                    with with_cert.cursor() as cur:
                        # mariadbd says who; through the proxy CURRENT_USER() is the backend's login.
                        cur.execute("SELECT CURRENT_USER()")
                        current = cur.fetchone()[0]
                    if who == "mariadbd":
                        self.assertTrue(current.startswith("x_subject@"), current)
                finally:
                    with_cert.close()
                without = login(port, "x_plain")
                try:
                    with self.assertRaises(pymysql.err.OperationalError) as caught:
                        change_user(without, "x_x509")
                    self.assertEqual(caught.exception.args[0], 1045)
                finally:
                    without.close()


if __name__ == "__main__":
    unittest.main()
