// MariaDB Connector/J (useServerPrepStmts=true): transactions through the
// proxy (issue 11). Read-your-write inside setAutoCommit(false) with prepared
// and with text statements, on a shard of db1 and one of db0, then rollback()
// (row gone) and commit() (row visible from another connection and on the
// backend); autocommit off by setAutoCommit(false) and by text spellings
// followed by a text ROLLBACK; a multi-row INSERT spanning both backends under
// autocommit off: OK and part of the transaction, or refused; never OK then
// lost. Rows: conv_id 9_100_032 + shard (shard 2 on db0, 9 on db1).
// SP_TX_DIRECT=1 runs the same against MariaDB itself (db0, database
// im_txref with an unsharded msg). Compiled and run by run_java.sh.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

public class TransactionsIT {
  static int passed = 0, failed = 0;
  static final boolean DIRECT = "1".equals(System.getenv("SP_TX_DIRECT"));
  static final long CONV_BASE = 9_100_032L; // % 16 == 0
  static final long DB0_CONV = CONV_BASE + 2, DB1_CONV = CONV_BASE + 9;
  static final long[] SPAN = {CONV_BASE + 3, CONV_BASE + 12, CONV_BASE + 5, CONV_BASE + 14}; // db0, db1, db0, db1
  static final String INSERT = "INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status)"
      + " VALUES (?, ?, ?, 77, 1, ?, 0)";
  static final String SELECT = "SELECT seq, content FROM msg WHERE conv_id = ? AND seq = ?";
  static long seqBase, counter;
  static Connection[] backend = new Connection[2];
  static Connection checker;

  static void check(boolean ok, String what) {
    if (ok) {
      passed++;
    } else {
      failed++;
      System.out.println("FAIL: " + what);
    }
  }

  static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isEmpty() ? fallback : v;
  }

  static String err(SQLException e) {
    return "ERROR " + e.getErrorCode() + ": " + e.getMessage();
  }

  static Connection open(String port, String user, String password, String db) throws SQLException {
    return DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + port + "/" + db
        + "?useServerPrepStmts=true&user=" + user + "&password=" + password);
  }

  static Connection target() throws SQLException {
    return DIRECT ? open(env("SP_DB0_PORT", "3307"), "root", "root_pw", "im_txref")
                  : open(env("SP_PROXY_PORT", "16033"), "app", "app_pw", "im");
  }

  record Row(long conv, long seq, long msgId) {
    String content() { return "java-" + conv + "-" + seq; }
    String insertText() {
      return "INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES (" + conv + ", "
          + seq + ", " + msgId + ", 77, 1, '" + content() + "', 0)";
    }
  }

  static Row next(long conv) {
    counter++;
    return new Row(conv, seqBase + counter, conv * 1000 + counter);
  }

  static long count(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
      r.next();
      return r.getLong(1);
    }
  }

  // (through another connection of the target, in the physical table on its backend)
  static String counts(Row r) throws SQLException {
    long through = count(checker, "SELECT COUNT(*) FROM msg WHERE conv_id = " + r.conv + " AND seq = " + r.seq);
    if (DIRECT) return through + "," + through;
    int shard = (int) (r.conv % 16);
    long physical = count(backend[shard / 8], String.format("SELECT COUNT(*) FROM msg_%02d WHERE conv_id = %d AND seq = %d",
        shard, r.conv, r.seq));
    return through + "," + physical;
  }

  static void expectCount(Row r, int want, String when) throws SQLException {
    String got = counts(r);
    check(got.equals(want + "," + want), when + ": conv_id " + r.conv + " seq " + r.seq + " (shard " + r.conv % 16
        + "): " + got + " rows (through another connection, on the backend), want " + want);
  }

  static void insert(Connection c, Row r, boolean prepared) throws SQLException {
    int n;
    if (prepared) {
      try (PreparedStatement ps = c.prepareStatement(INSERT)) {
        ps.setLong(1, r.conv);
        ps.setLong(2, r.seq);
        ps.setLong(3, r.msgId);
        ps.setBytes(4, r.content().getBytes());
        n = ps.executeUpdate();
      }
    } else {
      try (Statement s = c.createStatement()) {
        n = s.executeUpdate(r.insertText());
      }
    }
    if (n != 1) throw new SQLException("insert affected " + n + " rows");
  }

  static List<String> readBack(Connection c, Row r, boolean prepared) throws SQLException {
    List<String> out = new ArrayList<>();
    if (prepared) {
      try (PreparedStatement ps = c.prepareStatement(SELECT)) {
        ps.setLong(1, r.conv);
        ps.setLong(2, r.seq);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) out.add(rs.getLong(1) + ":" + new String(rs.getBytes(2)));
        }
      }
    } else {
      try (Statement s = c.createStatement();
           ResultSet rs = s.executeQuery("SELECT seq, content FROM msg WHERE conv_id = " + r.conv + " AND seq = " + r.seq)) {
        while (rs.next()) out.add(rs.getLong(1) + ":" + new String(rs.getBytes(2)));
      }
    }
    return out;
  }

  // setAutoCommit(false), INSERT, SELECT of that row, rollback()/commit().
  static void readYourWrite(long conv, boolean prepared, boolean commit) throws SQLException {
    String name = "read-your-write prepared=" + prepared + " commit=" + commit + " shard " + conv % 16;
    Row r = next(conv);
    try (Connection c = target()) {
      c.setAutoCommit(false);
      try {
        insert(c, r, prepared);
        List<String> got = readBack(c, r, prepared);
        check(got.equals(List.of(r.seq + ":" + r.content())), name + ": SELECT in the transaction: " + got);
        expectCount(r, 0, name + ": uncommitted, seen from outside");
        if (commit) c.commit(); else c.rollback();
      } catch (SQLException e) {
        check(false, name + ": " + err(e));
        try { c.rollback(); } catch (SQLException ignored) { }
        return;
      }
    }
    expectCount(r, commit ? 1 : 0, name + (commit ? ": after commit()" : ": after rollback()"));
  }

  // Autocommit off by setup (setAutoCommit(false) when setup is null), INSERT, text ROLLBACK.
  static void autocommitOff(String spelling, long conv, boolean prepared) throws SQLException {
    String name = spelling + " (prepared=" + prepared + ", shard " + conv % 16 + ")";
    Row r = next(conv);
    try (Connection c = target(); Statement s = c.createStatement()) {
      try {
        if (spelling.equals("setAutoCommit(false)")) c.setAutoCommit(false); else s.execute(spelling);
        check(count(c, "SELECT @@autocommit") == 0, name + ": @@autocommit is not 0");
        insert(c, r, prepared);
        check(readBack(c, r, prepared).size() == 1, name + ": read your write");
        expectCount(r, 0, name + ": uncommitted, seen from outside");
        s.execute("ROLLBACK");
      } catch (SQLException e) {
        check(false, name + ": " + err(e));
        return;
      }
    }
    expectCount(r, 0, name + ": after ROLLBACK");
  }

  static void spanningInsert(boolean prepared, String ending) throws SQLException {
    String name = "multi-backend INSERT under autocommit off (prepared=" + prepared + ") then " + ending;
    List<Row> rows = new ArrayList<>();
    StringBuilder sql = new StringBuilder("INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES ");
    for (long conv : SPAN) {
      Row r = next(conv);
      if (!rows.isEmpty()) sql.append(", ");
      sql.append(prepared ? "(?, ?, ?, 77, 1, 'span', 0)" : "(" + r.conv + ", " + r.seq + ", " + r.msgId + ", 77, 1, 'span', 0)");
      rows.add(r);
    }
    String outcome = "OK";
    int want = 0;
    try (Connection c = target(); Statement s = c.createStatement()) {
      c.setAutoCommit(false);
      try {
        int n;
        if (prepared) {
          try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
            int i = 1;
            for (Row r : rows) {
              ps.setLong(i++, r.conv);
              ps.setLong(i++, r.seq);
              ps.setLong(i++, r.msgId);
            }
            n = ps.executeUpdate();
          }
        } else {
          n = s.executeUpdate(sql.toString());
        }
        check(n == rows.size(), name + ": affected " + n);
        if (ending.equals("COMMIT")) {
          c.commit();
          want = 1;
        } else {
          c.rollback();
        }
      } catch (SQLException e) {
        outcome = err(e);
        c.rollback();
      }
    }
    System.out.println("  " + name + ": " + outcome);
    for (Row r : rows) expectCount(r, want, name + " (" + outcome + ")");
  }

  static void cleanup() throws SQLException {
    try (Connection c = target(); Statement s = c.createStatement()) {
      for (long conv : new long[] {DB0_CONV, DB1_CONV, SPAN[0], SPAN[1], SPAN[2], SPAN[3]}) {
        s.executeUpdate("DELETE FROM msg WHERE conv_id = " + conv);
      }
    }
  }

  public static void main(String[] args) throws Exception {
    seqBase = ThreadLocalRandom.current().nextLong(1_000_000, 1_000_000_000) * 1000;
    backend[0] = open(env("SP_DB0_PORT", "3307"), "root", "root_pw", "im");
    backend[1] = open(env("SP_DB1_PORT", "3308"), "root", "root_pw", "im");
    if (DIRECT) {
      try (Statement s = backend[0].createStatement()) {
        s.execute("CREATE DATABASE IF NOT EXISTS im_txref");
        s.execute("CREATE TABLE IF NOT EXISTS im_txref.msg LIKE im.msg_00");
      }
      System.out.println("java: direct mode, MariaDB on " + env("SP_DB0_PORT", "3307") + " database im_txref");
    }
    checker = target();
    cleanup();
    try {
      for (long conv : new long[] {DB1_CONV, DB0_CONV}) {
        for (boolean prepared : new boolean[] {true, false}) {
          readYourWrite(conv, prepared, false);
          readYourWrite(conv, prepared, true);
        }
      }
      for (long conv : new long[] {DB1_CONV, DB0_CONV}) {
        for (boolean prepared : new boolean[] {true, false}) {
          for (String spelling : new String[] {"setAutoCommit(false)", "SET autocommit=false",
                                               "SET SESSION autocommit = 'off'", "SET @@autocommit = FALSE"}) {
            autocommitOff(spelling, conv, prepared);
          }
        }
      }
      for (boolean prepared : new boolean[] {true, false}) {
        spanningInsert(prepared, "ROLLBACK");
        spanningInsert(prepared, "COMMIT");
        cleanup();
      }
    } finally {
      cleanup();
    }
    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed > 0 ? 1 : 0);
  }
}
