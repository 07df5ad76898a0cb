// MariaDB Connector/J over TLS to the proxy, run by tls_test.py against its own
// proxy (SP_TLS_PORT, SP_TLS_CA, SP_TLS_WRONG_CA). Debian's Connector/J is 2.7,
// which predates the sslMode option: VERIFY_CA is spelled useSsl=true +
// serverSslCert=<CA file> + disableSslHostnameVerification=true (chain checked,
// name not), VERIFY_FULL the same without the last option. Checks that both
// log in (a require_tls user for VERIFY_CA) and run a prepared statement, that
// a wrong CA is refused, and that the require_tls user without TLS gets 1045.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

public class TlsIT {
  static int failed = 0;

  static void check(boolean ok, String what) {
    if (!ok) {
      failed++;
      System.out.println("FAIL: " + what);
    }
  }

  static String env(String name) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) throw new IllegalStateException(name + " must be set (tls_test.py sets it)");
    return v;
  }

  static Connection open(String port, String ca, boolean verifyName, String user, String password) throws SQLException {
    String url = "jdbc:mariadb://127.0.0.1:" + port + "/im?useServerPrepStmts=true&useSsl=true&serverSslCert=" + ca
        + (verifyName ? "" : "&disableSslHostnameVerification=true") + "&user=" + user + "&password=" + password;
    return DriverManager.getConnection(url);
  }

  static void run(Connection c, String mode) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT ? + 1")) {
      ps.setInt(1, 41);
      try (ResultSet rs = ps.executeQuery()) {
        check(rs.next() && rs.getInt(1) == 42, mode + ": prepared SELECT ? + 1");
      }
    }
  }

  public static void main(String[] args) throws Exception {
    String port = env("SP_TLS_PORT"), ca = env("SP_TLS_CA"), wrongCa = env("SP_TLS_WRONG_CA");
    try (Connection c = open(port, ca, false, "secure", "secure_pw")) {
      run(c, "VERIFY_CA");
    }
    try (Connection c = open(port, ca, true, "app", "app_pw")) {
      run(c, "VERIFY_FULL");
    }
    try (Connection c = open(port, wrongCa, false, "app", "app_pw")) {
      check(false, "a CA that did not sign the proxy's certificate was accepted");
    } catch (SQLException e) {
      String all = String.valueOf(e.getMessage()) + " " + String.valueOf(e.getCause());
      check(all.contains("certif") || all.contains("PKIX") || all.contains("SSL"),
          "wrong CA: want a certificate error, got " + all);
    }
    try (Connection c = DriverManager.getConnection(
             "jdbc:mariadb://127.0.0.1:" + port + "/im?user=secure&password=secure_pw")) {
      check(false, "plaintext login of a require_tls user succeeded");
    } catch (SQLException e) {
      check(e.getErrorCode() == 1045, "plaintext require_tls user: want 1045, got " + e.getErrorCode() + " " + e.getMessage());
    }
    if (failed > 0) {
      System.out.println(failed + " failed");
      System.exit(1);
    }
    System.out.println("java tls: ok");
  }
}
