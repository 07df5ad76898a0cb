#include "proxy/core/xa_decision_log.hpp"

#include "proxy/core/sqlite_query.hpp"

namespace sp::proxy {

namespace {

constexpr const char* kSchema =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "CREATE TABLE IF NOT EXISTS xa_decisions (gtrid TEXT PRIMARY KEY, decided_unix_ms INTEGER NOT NULL);";

}  // namespace

std::expected<std::unique_ptr<XaDecisionLog>, std::string> XaDecisionLog::open(const std::string& path) {
  auto db = openSqliteWithSchema(path, kSchema);
  if (!db) return std::unexpected(db.error());
  return std::unique_ptr<XaDecisionLog>(new XaDecisionLog(*db));
}

XaDecisionLog::~XaDecisionLog() { sqlite3_close(db_); }

bool XaDecisionLog::recordCommit(const std::string& gtrid, int64_t unix_ms) {
  std::lock_guard lock(mu_);
  SqliteQuery q(db_, "INSERT OR REPLACE INTO xa_decisions (gtrid, decided_unix_ms) VALUES (?, ?)");
  if (!q.ok()) return false;
  q.bind(1, gtrid);
  q.bind(2, unix_ms);
  return q.step() == SQLITE_DONE;  // autocommit: durable (synchronous=FULL) when it returns
}

bool XaDecisionLog::committed(const std::string& gtrid) {
  std::lock_guard lock(mu_);
  SqliteQuery q(db_, "SELECT 1 FROM xa_decisions WHERE gtrid = ?");
  if (!q.ok()) return false;
  q.bind(1, gtrid);
  return q.step() == SQLITE_ROW;
}

void XaDecisionLog::forget(const std::string& gtrid) {
  std::lock_guard lock(mu_);
  SqliteQuery q(db_, "DELETE FROM xa_decisions WHERE gtrid = ?");
  if (!q.ok()) return;
  q.bind(1, gtrid);
  q.step();
}

std::vector<std::string> XaDecisionLog::decidedBefore(int64_t unix_ms) {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  SqliteQuery q(db_, "SELECT gtrid FROM xa_decisions WHERE decided_unix_ms < ? LIMIT 10000");
  if (!q.ok()) return out;
  q.bind(1, unix_ms);
  while (q.step() == SQLITE_ROW) out.push_back(q.text(0));
  return out;
}

size_t XaDecisionLog::size() {
  std::lock_guard lock(mu_);
  SqliteQuery q(db_, "SELECT COUNT(*) FROM xa_decisions");
  return q.ok() && q.step() == SQLITE_ROW ? static_cast<size_t>(q.integer(0)) : 0;
}

}  // namespace sp::proxy
