// MariaDB Connector/J (Debian's libmariadb-java) through the proxy with
// useServerPrepStmts=true: routed prepared writes and reads on msg and
// tg_channel_message, a batch, an aggregate on one shard, refusals that leave
// the connection usable. Placement checked directly on the backends
// (conv_id % 16). Compiled and run by run_java.sh.
import java.sql.Connection;
import java.sql.Date;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

public class PreparedIT {
  static int passed = 0, failed = 0;

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

  static Connection open(String port, String user, String password) throws SQLException {
    return DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + port + "/im?useServerPrepStmts=true&user="
        + user + "&password=" + password);
  }

  static long longOf(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
      r.next();
      return r.getLong(r.getMetaData().getColumnCount());
    }
  }

  static int refusal(PreparedStatement ps) {
    try {
      if (ps.execute()) ps.getResultSet().close();
      return 0;
    } catch (SQLException e) {
      return e.getErrorCode();
    }
  }

  public static void main(String[] args) throws Exception {
    Connection proxy = open(env("SP_PROXY_PORT", "16033"), "app", "app_pw");
    Connection[] db = {open(env("SP_DB0_PORT", "3307"), "proxy", "proxy_pw"),
        open(env("SP_DB1_PORT", "3308"), "proxy", "proxy_pw")};
    String executes = "SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'";
    long executesBefore = longOf(db[0], executes) + longOf(db[1], executes);
    long base = ThreadLocalRandom.current().nextLong(1L << 40) * 16 + (1L << 50);
    Timestamp created = Timestamp.valueOf("2025-03-14 15:09:26.535");

    PreparedStatement insert = proxy.prepareStatement("INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type,"
        + " content, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    List<Long> convs = new ArrayList<>();
    for (long k = 0; k < 16; k++) convs.add(base + (k * 7) % 16);
    for (long conv : convs) {
      insert.setLong(1, conv);
      insert.setInt(2, 1);
      insert.setLong(3, conv % 100000);
      insert.setInt(4, 42);
      insert.setByte(5, (byte) 1);
      insert.setBytes(6, new byte[] {0, (byte) conv, (byte) 0xff});
      insert.setShort(7, (short) 0);
      insert.setTimestamp(8, created);
      check(insert.executeUpdate() == 1, "insert " + conv);
    }
    for (long conv : convs) {
      int shard = (int) (conv % 16);
      int b = shard < 8 ? 0 : 1;
      long n = longOf(db[b], String.format("SELECT COUNT(*) FROM msg_%02d WHERE conv_id = %d", shard, conv));
      check(n == 1, "conv " + conv + ": db" + b + ".msg_" + shard + " has " + n + " rows, want 1");
    }
    PreparedStatement read = proxy.prepareStatement("SELECT seq, content, created_at FROM msg WHERE conv_id = ?");
    for (long conv : convs) {
      read.setLong(1, conv);
      try (ResultSet r = read.executeQuery()) {
        check(r.next(), "row for " + conv);
        check(r.getInt(1) == 1 && Arrays.equals(r.getBytes(2), new byte[] {0, (byte) conv, (byte) 0xff})
            && r.getTimestamp(3).equals(created), "values of " + conv);
        check(!r.next(), "one row for " + conv);
      }
    }
    // A batch of three rows for one conversation, then an aggregate on its shard.
    for (int s = 2; s <= 4; s++) {
      insert.setLong(1, base + 5);
      insert.setInt(2, s);
      insert.setLong(3, 900000 + s);
      insert.setBytes(6, new byte[] {'b'});
      insert.addBatch();
    }
    int[] counts = insert.executeBatch();
    check(counts.length == 3, "batch counts " + Arrays.toString(counts));
    PreparedStatement agg = proxy.prepareStatement("SELECT COUNT(*), SUM(seq), MAX(seq) FROM msg WHERE conv_id = ?");
    agg.setLong(1, base + 5);
    try (ResultSet r = agg.executeQuery()) {
      check(r.next() && r.getLong(1) == 4 && r.getLong(2) == 10 && r.getLong(3) == 4, "aggregate on one shard");
    }
    PreparedStatement update = proxy.prepareStatement("UPDATE msg SET status = ? WHERE conv_id = ? AND seq >= ?");
    update.setInt(1, 2);
    update.setLong(2, base + 5);
    update.setInt(3, 2);
    check(update.executeUpdate() == 3, "update count");
    // The maximum unsigned key: Java has no unsigned long, Connector/J sends
    // BigDecimal/BigInteger as DECIMAL text, which the proxy compares exactly
    // (as the server does): the row must land in msg_15 on db1.
    PreparedStatement maxInsert = proxy.prepareStatement(
        "INSERT INTO msg (conv_id, seq, msg_id, sender_uid, content) VALUES (?, ?, ?, 42, 'max')");
    Object[] maxKeys = {new java.math.BigDecimal("18446744073709551615"),
                        new java.math.BigInteger("18446744073709551615")};
    for (int i = 0; i < maxKeys.length; ++i) {
      maxInsert.setObject(1, maxKeys[i]);
      maxInsert.setLong(2, base + i);
      maxInsert.setLong(3, base + 100 + i);  // msg_id: unique per table, so derived from this run
      int code = refusal(maxInsert);
      long onDb1 = longOf(db[1], "SELECT COUNT(*) FROM msg_15 WHERE conv_id = 18446744073709551615 AND seq = " + (base + i));
      check(code == 0 && onDb1 == 1, "max key as " + maxKeys[i].getClass().getSimpleName()
          + ": error " + code + ", rows on db1.msg_15: " + onDb1);
    }

    // tg_channel_message with DATE month parameters.
    long peer = 1000000000L + ThreadLocalRandom.current().nextInt(1000000000);
    PreparedStatement tg = proxy.prepareStatement("INSERT INTO tg_channel_message (peer_id, message_id, message_month,"
        + " message_time, text_body, ingested_at) VALUES (?, ?, ?, ?, ?, ?)");
    tg.setLong(1, peer);
    tg.setLong(2, 5);
    tg.setDate(3, Date.valueOf("2025-03-01"));
    tg.setTimestamp(4, created);
    tg.setString(5, "hello from java \u2713");
    tg.setTimestamp(6, created);
    check(tg.executeUpdate() == 1, "tg insert");
    PreparedStatement tgRead = proxy.prepareStatement(
        "SELECT text_body FROM tg_channel_message WHERE peer_id = ? AND message_month BETWEEN ? AND ?");
    tgRead.setLong(1, peer);
    tgRead.setDate(2, Date.valueOf("2025-01-01"));
    tgRead.setDate(3, Date.valueOf("2025-06-01"));
    try (ResultSet r = tgRead.executeQuery()) {
      check(r.next() && r.getString(1).equals("hello from java \u2713"), "tg read");
    }
    int tgShard = (int) longOf(db[0], "SELECT CRC32(CONCAT('channel:', " + peer + ")) % 64 DIV 16");
    String tgTable = String.format("tg_channel_message_s%02d", tgShard);
    check(longOf(db[tgShard / 2], "SELECT COUNT(*) FROM " + tgTable + " WHERE peer_id = " + peer) == 1,
        "tg row in " + tgTable);

    // Refusals, then the same connection and statements keep working.
    PreparedStatement keyUpdate = proxy.prepareStatement("UPDATE msg SET conv_id = ? WHERE conv_id = ?");
    keyUpdate.setLong(1, base + 1);
    keyUpdate.setLong(2, base);
    check(refusal(keyUpdate) == 9110, "key update refused with 9110");
    PreparedStatement noKey = proxy.prepareStatement("DELETE FROM msg WHERE (conv_id = ? OR 1 = 1) AND seq = 0");
    noKey.setLong(1, base);
    check(refusal(noKey) == 9101, "missing key refused with 9101");
    tgRead.setDate(3, Date.valueOf("2026-06-01"));
    check(refusal(tgRead) == 9106, "14-month span refused with 9106");
    read.setLong(1, -5);
    check(refusal(read) == 9104, "negative key refused with 9104");
    read.setLong(1, base);
    try (ResultSet r = read.executeQuery()) {
      check(r.next() && r.getInt(1) == 1, "read after refusals");
    }

    PreparedStatement del = proxy.prepareStatement("DELETE FROM msg WHERE conv_id = ?");
    long deleted = 0;
    for (long conv : convs) {
      del.setLong(1, conv);
      deleted += del.executeUpdate();
    }
    check(deleted == 19, "deleted " + deleted + " rows, want 19");
    try (Statement s = db[1].createStatement()) {
      s.execute("DELETE FROM msg_15 WHERE conv_id = 18446744073709551615 AND seq IN (" + base + ", " + (base + 1) + ")");
    }
    try (Statement s = db[tgShard / 2].createStatement()) {
      s.execute("DELETE FROM " + tgTable + " WHERE peer_id = " + peer);
    }
    // Statement.cancel(): the driver opens a second connection and sends KILL
    // QUERY with the thread id of this one's handshake (the proxy's id).
    PreparedStatement slow = proxy.prepareStatement("SELECT SLEEP(?)");
    slow.setInt(1, 20);
    Thread canceller = new Thread(() -> {
      try {
        Thread.sleep(1000);
        slow.cancel();
      } catch (Exception e) {
        System.out.println("cancel failed: " + e);
      }
    });
    long cancelStart = System.nanoTime();
    canceller.start();
    int cancelCode = 0;
    try (ResultSet r = slow.executeQuery()) {
      r.next();
    } catch (SQLException e) {
      cancelCode = e.getErrorCode();
    }
    canceller.join();
    double cancelSeconds = (System.nanoTime() - cancelStart) / 1e9;
    check(cancelCode == 1317 && cancelSeconds < 10,
          "Statement.cancel(): error " + cancelCode + " after " + cancelSeconds + " s, want 1317 within 10 s");
    slow.setInt(1, 0);
    try (ResultSet r = slow.executeQuery()) {
      check(r.next() && r.getInt(1) == 0, "the connection goes on after cancel");
    }

    long stmtExecutes = longOf(db[0], executes) + longOf(db[1], executes) - executesBefore;
    check(stmtExecutes >= 30, "only " + stmtExecutes + " COM_STMT_EXECUTE reached the backends");
    System.out.println("java: " + stmtExecutes + " COM_STMT_EXECUTE on the backends");
    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed == 0 ? 0 : 1);
  }
}
