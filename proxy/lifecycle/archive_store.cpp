#include "proxy/lifecycle/archive_store.hpp"

#include <sqlite3.h>

#include "proxy/maps/shard_map_store.hpp"
#include "proxy/core/sqlite_query.hpp"

namespace sp::proxy {

namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS archive_progress ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, table_name TEXT NOT NULL, shard TEXT NOT NULL,"
    " source TEXT NOT NULL, target TEXT NOT NULL, cutoff TEXT NOT NULL, cursor TEXT NOT NULL DEFAULT '',"
    " rows INTEGER NOT NULL DEFAULT 0, batches INTEGER NOT NULL DEFAULT 0, retries INTEGER NOT NULL DEFAULT 0,"
    " seconds REAL NOT NULL DEFAULT 0, state TEXT NOT NULL, message TEXT NOT NULL DEFAULT '',"
    " started_at TEXT NOT NULL, updated_at TEXT NOT NULL)";
constexpr const char* kColumns =
    "id, kind, table_name, shard, source, target, cutoff, cursor, rows, batches, retries, seconds, state, message, "
    "started_at, updated_at";

ArchiveProgress readRow(SqliteQuery& q) {
  ArchiveProgress p;
  p.id = q.integer(0);
  p.kind = q.text(1);
  p.table = q.text(2);
  p.shard = q.text(3);
  p.source = q.text(4);
  p.target = q.text(5);
  p.cutoff = q.text(6);
  p.cursor = q.text(7);
  p.rows = static_cast<uint64_t>(q.integer(8));
  p.batches = static_cast<uint64_t>(q.integer(9));
  p.retries = static_cast<uint64_t>(q.integer(10));
  p.seconds = q.real(11);
  p.state = q.text(12);
  p.message = q.text(13);
  p.started_at = q.text(14);
  p.updated_at = q.text(15);
  return p;
}

}  // namespace

std::expected<std::unique_ptr<ArchiveStore>, std::string> ArchiveStore::open(const std::string& path) {
  if (path.empty()) return std::unexpected(std::string("archive runs need the SQLite file of `cache:` in the config"));
  auto db = openSqliteWithSchema(path, kSchema);
  if (!db) return std::unexpected(db.error());
  return std::unique_ptr<ArchiveStore>(new ArchiveStore(*db));
}

ArchiveStore::~ArchiveStore() { sqlite3_close(db_); }

std::expected<std::optional<ArchiveProgress>, std::string> ArchiveStore::unfinished(const std::string& kind,
                                                                                   const std::string& table,
                                                                                   const std::string& shard,
                                                                                   const std::string& cutoff) {
  SqliteQuery q(db_, std::string("SELECT ") + kColumns +
                   " FROM archive_progress WHERE kind = ?1 AND table_name = ?2 AND shard = ?3 AND cutoff = ?4 "
                   "AND state <> 'done' ORDER BY id DESC LIMIT 1");
  if (!q.ok()) return std::unexpected(q.error());
  q.bind(1, kind);
  q.bind(2, table);
  q.bind(3, shard);
  q.bind(4, cutoff);
  int rc = q.step();
  if (rc == SQLITE_ROW) return readRow(q);
  if (rc != SQLITE_DONE) return std::unexpected(q.error());
  return std::nullopt;
}

std::expected<void, std::string> ArchiveStore::save(ArchiveProgress& p) {
  p.updated_at = utcNowText();
  if (p.started_at.empty()) p.started_at = p.updated_at;
  std::string sql =
      p.id == 0 ? "INSERT INTO archive_progress (kind, table_name, shard, source, target, cutoff, cursor, rows, batches, "
                  "retries, seconds, state, message, started_at, updated_at) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
                : "UPDATE archive_progress SET kind = ?1, table_name = ?2, shard = ?3, source = ?4, target = ?5, "
                  "cutoff = ?6, cursor = ?7, rows = ?8, batches = ?9, retries = ?10, seconds = ?11, state = ?12, "
                  "message = ?13, started_at = ?14, updated_at = ?15 WHERE id = ?16";
  SqliteQuery q(db_, sql);
  if (!q.ok()) return std::unexpected(q.error());
  q.bind(1, p.kind);
  q.bind(2, p.table);
  q.bind(3, p.shard);
  q.bind(4, p.source);
  q.bind(5, p.target);
  q.bind(6, p.cutoff);
  q.bind(7, p.cursor);
  q.bind(8, static_cast<int64_t>(p.rows));
  q.bind(9, static_cast<int64_t>(p.batches));
  q.bind(10, static_cast<int64_t>(p.retries));
  q.bind(11, p.seconds);
  q.bind(12, p.state);
  q.bind(13, p.message);
  q.bind(14, p.started_at);
  q.bind(15, p.updated_at);
  if (p.id != 0) q.bind(16, p.id);
  if (q.step() != SQLITE_DONE) return std::unexpected(q.error());
  if (p.id == 0) p.id = sqlite3_last_insert_rowid(db_);
  return {};
}

std::expected<std::vector<ArchiveProgress>, std::string> ArchiveStore::list(size_t limit) {
  std::string sql = std::string("SELECT ") + kColumns + " FROM archive_progress ORDER BY id DESC";
  if (limit) sql += " LIMIT " + std::to_string(limit);
  SqliteQuery q(db_, sql);
  if (!q.ok()) return std::unexpected(q.error());
  std::vector<ArchiveProgress> out;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) out.push_back(readRow(q));
  if (rc != SQLITE_DONE) return std::unexpected(q.error());
  return out;
}

}  // namespace sp::proxy
