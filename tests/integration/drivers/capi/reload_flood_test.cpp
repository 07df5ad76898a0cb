// Two prepared-statement properties that need more than one query:
// * ShardMapReload: a statement prepared under map version 1 and executed
//   after `RELOAD SHARD MAP` (admin port) plans against version 2. It runs its
//   own shardproxy (SP_PROXY_BINARY) with a temporary config and map file, so
//   the shared test proxy and conf/shard_map.yaml are never changed.
// * StatementFlood: 100 000 distinct statements prepared and closed by one
//   client keep the test proxy's resident memory and the backend's count of
//   server-side statements bounded.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "stmt_helpers.hpp"

namespace sp::drivers {
namespace {

namespace fs = std::filesystem;
const unsigned kDbPorts[2] = {envPort("SP_DB0_PORT", 3307), envPort("SP_DB1_PORT", 3308)};
const unsigned kReloadPort = envPort("SP_RELOAD_PROXY_PORT", 16043);
const unsigned kReloadAdminPort = envPort("SP_RELOAD_ADMIN_PORT", 16044);

std::string mapText(int version, const char* db0_shards, const char* db1_shards) {
  return "version: " + std::to_string(version) +
         "\n"
         "tables:\n"
         "  it_drv_moved:\n"
         "    key: conv_id\n"
         "    method: mod\n"
         "    shards: 4\n"
         "    table: \"it_drv_moved_{shard:02}\"\n"
         "    backends:\n"
         "      db0: \"" + db0_shards + "\"\n"
         "      db1: \"" + db1_shards + "\"\n";
}

std::string configText(const fs::path& dir) {
  std::string backends;
  for (int i = 0; i < 2; ++i) {
    backends += "  - name: db" + std::to_string(i) + "\n    address: 127.0.0.1:" + std::to_string(kDbPorts[i]) +
                "\n    user: proxy\n    password: proxy_pw\n    database: im\n    max_connections: 8\n";
  }
  return "server:\n  listen: 127.0.0.1:" + std::to_string(kReloadPort) + "\n  admin_listen: 127.0.0.1:" +
         std::to_string(kReloadAdminPort) +
         "\n  threads: 1\n  shutdown_grace_ms: 1000\n  log_level: debug\n"
         "users:\n  - name: app\n    password: app_pw\n    default_database: im\n"
         "admin_users:\n  - name: admin\n    password: admin_pw\n"
         "backends:\n" + backends + "shard_map: " + (dir / "map.yaml").string() +
         "\ndefault_backend: db0\ncache: " + (dir / "shardmap.sqlite").string() + "\n";
}

void writeFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

// A shardproxy child process on kReloadPort; stopped (SIGTERM) by the destructor.
class OwnProxy {
 public:
  OwnProxy(const std::string& binary, const fs::path& dir) : log_(dir / "shardproxy.log") {
    pid_ = fork();
    if (pid_ == 0) {
      FILE* log = std::fopen(log_.c_str(), "a");
      if (log) {
        dup2(fileno(log), 1);
        dup2(fileno(log), 2);
      }
      const std::string config = (dir / "shardproxy.yaml").string();
      execl(binary.c_str(), binary.c_str(), "--config", config.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~OwnProxy() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
  }
  // Connects as app, retrying while the proxy starts (up to 20 s).
  Connection connect(bool* ok) {
    Connection conn;
    for (int i = 0; i < 100; ++i) {
      conn = connectTo(kReloadPort, "app", "app_pw", "im", ok);
      if (*ok || waitpid(pid_, nullptr, WNOHANG) != 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return conn;
  }
  std::string logTail() const {
    std::ifstream in(log_);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return all.size() > 3000 ? all.substr(all.size() - 3000) : all;
  }

 private:
  fs::path log_;
  pid_t pid_ = -1;
};

class Backends {
 public:
  Backends() {
    for (int i = 0; i < 2; ++i) {
      bool ok = false;
      db_[i] = connectTo(kDbPorts[i], "proxy", "proxy_pw", "im", &ok);
      EXPECT_TRUE(ok) << mysql_error(db_[i].get());
    }
  }
  void run(int i, const std::string& sql) {
    EXPECT_EQ(mysql_real_query(db_[i].get(), sql.data(), sql.size()), 0) << sql << ": " << mysql_error(db_[i].get());
    if (MYSQL_RES* r = mysql_store_result(db_[i].get())) mysql_free_result(r);
  }
  Rows rows(int i, const std::string& sql) { return textRows(db_[i].get(), sql); }

 private:
  Connection db_[2];
};

TEST(ShardMapReload, PreparedStatementPlansAgainstTheReloadedMap) {
  const char* binary = std::getenv("SP_PROXY_BINARY");
  ASSERT_TRUE(binary && *binary) << "SP_PROXY_BINARY must name the shardproxy binary";
  char tmpl[] = "/tmp/sp-drv-reload-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir(tmpl);
  writeFile(dir / "map.yaml", mapText(1, "0-1", "2-3"));
  writeFile(dir / "shardproxy.yaml", configText(dir));

  // Every physical table on both backends, so the moved shard 2 exists on each;
  // the copies of shard 2 say which backend they are on.
  Backends db;
  for (int i = 0; i < 2; ++i) {
    for (int s = 0; s < 4; ++s) {
      const std::string t = "it_drv_moved_0" + std::to_string(s);
      db.run(i, "DROP TABLE IF EXISTS " + t);
      db.run(i, "CREATE TABLE " + t + " (conv_id BIGINT UNSIGNED, v VARCHAR(16), PRIMARY KEY (conv_id, v))");
    }
    db.run(i, "INSERT INTO it_drv_moved_02 VALUES (6, 'on db" + std::to_string(i) + "')");
  }

  {
    OwnProxy proxy(binary, dir);
    bool ok = false;
    Connection app = proxy.connect(&ok);
    ASSERT_TRUE(ok) << mysql_error(app.get()) << "\n" << proxy.logTail();
    Stmt select(app.get(), "SELECT v FROM it_drv_moved WHERE conv_id = ?");
    Stmt insert(app.get(), "INSERT INTO it_drv_moved (conv_id, v) VALUES (?, ?)");
    ASSERT_TRUE(select.prepared() && insert.prepared()) << select.error() << insert.error();
    auto readKey6 = [&]() -> std::string {
      Params p;
      p.num(MYSQL_TYPE_LONGLONG, uint64_t(6), true);
      if (!select.execute(p)) return "<error " + select.error() + ">";
      return select.rows().size() == 1 ? select.rows()[0][0].value_or("<null>") : "<rows: " + std::to_string(select.rows().size()) + ">";
    };
    EXPECT_EQ(readKey6(), "on db1");  // version 1: shard 2 on db1

    // Version 2 moves shard 2 to db0; reload through the admin interface.
    writeFile(dir / "map.yaml", mapText(2, "0-2", "3"));
    // The proxy listens for clients before its admin port is up (start-up
    // goes on meanwhile: recovery of cross-backend transactions, moves, ...).
    Connection admin;
    for (int i = 0; i < 50; ++i) {
      admin = connectTo(kReloadAdminPort, "admin", "admin_pw", nullptr, &ok);
      if (ok) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ASSERT_TRUE(ok) << "admin port " << kReloadAdminPort << ": " << mysql_error(admin.get());
    std::string error;
    textRows(admin.get(), "RELOAD SHARD MAP", &error);
    ASSERT_EQ(error, "") << proxy.logTail();

    EXPECT_EQ(readKey6(), "on db0");  // the same statement, planned against version 2
    Params row;
    row.num(MYSQL_TYPE_LONGLONG, uint64_t(10), true).text(MYSQL_TYPE_VAR_STRING, "inserted");
    ASSERT_TRUE(insert.execute(row)) << insert.error();
    EXPECT_EQ(db.rows(0, "SELECT conv_id FROM it_drv_moved_02 WHERE v = 'inserted'"), (Rows{Row{"10"}}));
    EXPECT_TRUE(db.rows(1, "SELECT conv_id FROM it_drv_moved_02 WHERE v = 'inserted'").empty());
    // A shard that did not move stays put.
    Params other;
    other.num(MYSQL_TYPE_LONGLONG, uint64_t(7), true).text(MYSQL_TYPE_VAR_STRING, "stays");
    ASSERT_TRUE(insert.execute(other)) << insert.error();
    EXPECT_EQ(db.rows(1, "SELECT conv_id FROM it_drv_moved_03 WHERE v = 'stays'"), (Rows{Row{"7"}}));
  }
  for (int i = 0; i < 2; ++i) {
    for (int s = 0; s < 4; ++s) db.run(i, "DROP TABLE IF EXISTS it_drv_moved_0" + std::to_string(s));
  }
  fs::remove_all(dir);
}

long rssKiB(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

int testProxyPid() {
  const char* log = std::getenv("SP_PROXY_LOG");
  fs::path pid_file = std::getenv("SP_PROXY_PID_FILE") ? fs::path(std::getenv("SP_PROXY_PID_FILE"))
                      : log ? fs::path(log).parent_path() / "shardproxy.pid" : fs::path();
  std::ifstream in(pid_file);
  int pid = 0;
  in >> pid;
  return pid;
}

long preparedOnBackend(MYSQL* db) {
  auto r = textRows(db, "SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'");
  return r.size() == 1 && r[0][1] ? std::stol(*r[0][1]) : -1;
}

TEST(StatementFlood, HundredThousandDistinctStatementsStayBounded) {
  const int pid = testProxyPid();
  ASSERT_GT(pid, 0) << "set SP_PROXY_LOG (next to shardproxy.pid) or SP_PROXY_PID_FILE";
  bool ok = false;
  Connection app = connectTo(kProxyPort, "app", "app_pw", "im", &ok);
  ASSERT_TRUE(ok) << mysql_error(app.get());
  Connection db0 = connectTo(kDbPorts[0], "proxy", "proxy_pw", "im", &ok);
  ASSERT_TRUE(ok) << mysql_error(db0.get());
  const long rss_before = rssKiB(pid);
  const long backend_before = preparedOnBackend(db0.get());
  ASSERT_GT(rss_before, 0);
  const int kStatements = 100000;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kStatements; ++i) {
    // Distinct text each time: sharded (msg) and unsharded statements alternate.
    const std::string sql = i % 2 ? "SELECT seq + " + std::to_string(i) + " FROM msg WHERE conv_id = ?"
                                  : "SELECT " + std::to_string(i) + " + ?";
    MYSQL_STMT* stmt = mysql_stmt_init(app.get());
    ASSERT_EQ(mysql_stmt_prepare(stmt, sql.data(), sql.size()), 0) << i << ": " << mysql_stmt_error(stmt);
    if (i % 1000 == 0) {  // now and then also executed
      Params p;
      p.num(MYSQL_TYPE_LONGLONG, uint64_t(i), true);
      ASSERT_EQ(mysql_stmt_bind_param(stmt, p.binds().data()), 0);
      ASSERT_EQ(mysql_stmt_execute(stmt), 0) << i << ": " << mysql_stmt_error(stmt);
      ASSERT_EQ(mysql_stmt_store_result(stmt), 0);
    }
    mysql_stmt_close(stmt);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const long rss_after = rssKiB(pid);
  const long backend_after = preparedOnBackend(db0.get());
  std::cout << "statement flood: " << kStatements << " prepare+close in " << seconds << " s ("
            << kStatements / seconds << "/s); proxy VmRSS " << rss_before << " KiB -> " << rss_after
            << " KiB (growth " << (rss_after - rss_before) / 1024.0 << " MiB); db0 Prepared_stmt_count "
            << backend_before << " -> " << backend_after << std::endl;
  EXPECT_LT(rss_after - rss_before, 200 * 1024) << "proxy RSS grew by more than 200 MiB";
  // Each backend connection keeps at most its LRU's capacity (256); the test
  // proxy has at most 64 connections per backend.
  EXPECT_LE(backend_after, 256 * 64);
  // The session still works.
  Stmt last(app.get(), "SELECT COUNT(*) FROM msg WHERE conv_id = ?");
  ASSERT_TRUE(last.prepared()) << last.error();
  Params p;
  p.num(MYSQL_TYPE_LONGLONG, uint64_t(18446744073709551615ull), true);
  ASSERT_TRUE(last.execute(p)) << last.error();
  EXPECT_EQ(last.rows().size(), 1u);
}

}  // namespace
}  // namespace sp::drivers
