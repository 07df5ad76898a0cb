#include "proxy/maps/shard_map_store.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <set>

namespace sp::proxy {

namespace {

constexpr const char* kTable = "applied_shard_maps";
constexpr const char* kCreateSchema =
    "CREATE TABLE applied_shard_maps ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " version INTEGER NOT NULL,"
    " checksum TEXT NOT NULL,"
    " source_text TEXT NOT NULL,"
    " applied_at TEXT NOT NULL,"
    " applied_by TEXT NOT NULL,"
    " note TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX applied_shard_maps_version ON applied_shard_maps(version);";
const std::set<std::string> kColumns = {"id", "version", "checksum", "source_text", "applied_at", "applied_by", "note"};

// Owns a prepared statement.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ok() const { return rc_ == SQLITE_OK && stmt_ != nullptr; }
  int prepareCode() const { return rc_; }
  sqlite3_stmt* get() { return stmt_; }
  std::string text(int column) {
    auto* p = sqlite3_column_text(stmt_, column);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
             : std::string();
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

enum class CheckResult : uint8_t { kOk, kCreated, kCorrupt, kFatal };

// Verifies the file is a SQLite database holding our table (or nothing yet).
CheckResult checkSchema(sqlite3* db, std::string& problem) {
  std::set<std::string> tables;
  {
    Statement st(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
    if (!st.ok()) {
      problem = sqlite3_errmsg(db);
      int code = st.prepareCode() & 0xff;
      return code == SQLITE_NOTADB || code == SQLITE_CORRUPT ? CheckResult::kCorrupt : CheckResult::kFatal;
    }
    int rc;
    while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) tables.insert(st.text(0));
    if (rc != SQLITE_DONE) {
      problem = sqlite3_errmsg(db);
      return (rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT ? CheckResult::kCorrupt
                                                                           : CheckResult::kFatal;
    }
  }
  if (tables.empty()) {
    char* err = nullptr;
    if (sqlite3_exec(db, kCreateSchema, nullptr, nullptr, &err) != SQLITE_OK) {
      problem = err ? err : "cannot create the schema";
      sqlite3_free(err);
      return CheckResult::kFatal;
    }
    return CheckResult::kCreated;
  }
  if (!tables.contains(kTable)) {
    problem = "no table applied_shard_maps (another application's database?)";
    return CheckResult::kCorrupt;
  }
  std::set<std::string> columns;
  Statement info(db, "PRAGMA table_info(applied_shard_maps)");
  while (info.ok() && sqlite3_step(info.get()) == SQLITE_ROW) columns.insert(info.text(1));
  if (columns != kColumns) {
    problem = "table applied_shard_maps has unexpected columns";
    return CheckResult::kCorrupt;
  }
  Statement check(db, "PRAGMA quick_check");
  if (!check.ok() || sqlite3_step(check.get()) != SQLITE_ROW || check.text(0) != "ok") {
    problem = "integrity check failed: " + (check.ok() ? check.text(0) : std::string(sqlite3_errmsg(db)));
    return CheckResult::kCorrupt;
  }
  return CheckResult::kOk;
}

CheckResult openChecked(const std::string& path, sqlite3** db, std::string& problem) {
  *db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    problem = *db ? sqlite3_errmsg(*db) : "out of memory";
    sqlite3_close(*db);
    *db = nullptr;
    return CheckResult::kFatal;
  }
  sqlite3_busy_timeout(*db, 2000);
  auto result = checkSchema(*db, problem);
  if (result == CheckResult::kCorrupt || result == CheckResult::kFatal) {
    sqlite3_close(*db);
    *db = nullptr;
  }
  return result;
}

std::string compactUtcStamp() {
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

}  // namespace

std::string utcNowText() {
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::expected<std::unique_ptr<ShardMapStore>, std::string> ShardMapStore::open(const std::string& path,
                                                                                OpenReport* report) {
  OpenReport local;
  OpenReport& rep = report ? *report : local;
  std::error_code fs_ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, fs_ec);
  if (fs_ec) return std::unexpected("cannot create directory " + parent.string() + ": " + fs_ec.message());

  sqlite3* db = nullptr;
  std::string problem;
  auto result = openChecked(path, &db, problem);
  if (result == CheckResult::kCorrupt) {
    rep.problem = problem;
    rep.set_aside_path = path + ".corrupt-" + compactUtcStamp();
    std::filesystem::rename(path, rep.set_aside_path, fs_ec);
    if (fs_ec) return std::unexpected("cache " + path + " is unusable (" + problem + ") and cannot be renamed: " +
                                      fs_ec.message());
    // SQLite side files of the old database belong to it, not to the new one.
    for (const char* suffix : {"-journal", "-wal", "-shm"}) std::filesystem::remove(path + suffix, fs_ec);
    result = openChecked(path, &db, problem);
  }
  if (result == CheckResult::kFatal || result == CheckResult::kCorrupt) {
    return std::unexpected("cannot open shard-map cache " + path + ": " + problem);
  }
  rep.created = result == CheckResult::kCreated;
  return std::unique_ptr<ShardMapStore>(new ShardMapStore(path, db));
}

ShardMapStore::~ShardMapStore() { sqlite3_close(db_); }

std::expected<CachedShardMap, std::string> ShardMapStore::save(CachedShardMap map) {
  if (map.applied_at.empty()) map.applied_at = utcNowText();
  Statement st(db_,
               "INSERT INTO applied_shard_maps (version, checksum, source_text, applied_at, applied_by, note) "
               "VALUES (?, ?, ?, ?, ?, ?)");
  if (!st.ok()) return std::unexpected(std::string("cache insert: ") + sqlite3_errmsg(db_));
  sqlite3_bind_int64(st.get(), 1, static_cast<sqlite3_int64>(map.version));
  sqlite3_bind_text(st.get(), 2, map.checksum.data(), static_cast<int>(map.checksum.size()), SQLITE_STATIC);
  sqlite3_bind_text(st.get(), 3, map.source_text.data(), static_cast<int>(map.source_text.size()), SQLITE_STATIC);
  sqlite3_bind_text(st.get(), 4, map.applied_at.data(), static_cast<int>(map.applied_at.size()), SQLITE_STATIC);
  sqlite3_bind_text(st.get(), 5, map.applied_by.data(), static_cast<int>(map.applied_by.size()), SQLITE_STATIC);
  sqlite3_bind_text(st.get(), 6, map.note.data(), static_cast<int>(map.note.size()), SQLITE_STATIC);
  if (sqlite3_step(st.get()) != SQLITE_DONE) return std::unexpected(std::string("cache insert: ") + sqlite3_errmsg(db_));
  map.id = sqlite3_last_insert_rowid(db_);
  return map;
}

std::expected<std::vector<CachedShardMap>, std::string> ShardMapStore::query(const std::string& where_order,
                                                                            int64_t bind_value, bool bind) const {
  std::string sql = "SELECT id, version, checksum, source_text, applied_at, applied_by, note FROM applied_shard_maps " +
                    where_order;
  Statement st(db_, sql.c_str());
  if (!st.ok()) return std::unexpected(std::string("cache query: ") + sqlite3_errmsg(db_));
  if (bind) sqlite3_bind_int64(st.get(), 1, bind_value);
  std::vector<CachedShardMap> rows;
  int rc;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    CachedShardMap m;
    m.id = sqlite3_column_int64(st.get(), 0);
    m.version = static_cast<uint64_t>(sqlite3_column_int64(st.get(), 1));
    m.checksum = st.text(2);
    m.source_text = st.text(3);
    m.applied_at = st.text(4);
    m.applied_by = st.text(5);
    m.note = st.text(6);
    rows.push_back(std::move(m));
  }
  if (rc != SQLITE_DONE) return std::unexpected(std::string("cache query: ") + sqlite3_errmsg(db_));
  return rows;
}

std::expected<std::vector<CachedShardMap>, std::string> ShardMapStore::list(size_t limit) const {
  if (limit == 0) return query("ORDER BY id DESC", 0, false);
  return query("ORDER BY id DESC LIMIT ?", static_cast<int64_t>(limit), true);
}

std::expected<std::optional<CachedShardMap>, std::string> ShardMapStore::newest() const {
  auto rows = query("ORDER BY id DESC LIMIT 1", 0, false);
  if (!rows) return std::unexpected(rows.error());
  if (rows->empty()) return std::optional<CachedShardMap>();
  return std::optional<CachedShardMap>(std::move(rows->front()));
}

std::expected<std::optional<CachedShardMap>, std::string> ShardMapStore::findVersion(uint64_t version) const {
  auto rows = query("WHERE version = ? ORDER BY id DESC LIMIT 1", static_cast<int64_t>(version), true);
  if (!rows) return std::unexpected(rows.error());
  if (rows->empty()) return std::optional<CachedShardMap>();
  return std::optional<CachedShardMap>(std::move(rows->front()));
}

}  // namespace sp::proxy
