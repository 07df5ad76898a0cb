#include "proxy/move/move_store.hpp"

#include <array>
#include <charconv>

#include "proxy/maps/shard_map_store.hpp"
#include "proxy/core/sqlite_query.hpp"

namespace sp::proxy {

namespace {

constexpr std::array<std::string_view, 11> kStateNames = {
    "copying", "catching_up", "verifying", "cutting_over", "switched", "verified",
    "verify_failed", "cleaning_up", "cleaned_up", "failed", "cancelled"};
constexpr std::array<std::string_view, 4> kCleanupNames = {"", "pending", "done", "abandoned"};

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS moves ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, table_name TEXT NOT NULL,"
    " buckets TEXT NOT NULL, move_key TEXT NOT NULL, shard INTEGER NOT NULL, target_name TEXT NOT NULL,"
    " what TEXT NOT NULL, source TEXT NOT NULL, target TEXT NOT NULL, state TEXT NOT NULL,"
    " rows_copied INTEGER NOT NULL, copy_seconds REAL NOT NULL, snapshot_position TEXT NOT NULL,"
    " applied_position TEXT NOT NULL, rows_applied INTEGER NOT NULL, lag_seconds REAL NOT NULL,"
    " lag_bytes INTEGER NOT NULL, verify TEXT NOT NULL, pause_ms REAL NOT NULL, cutover_attempts INTEGER NOT NULL,"
    " old_version INTEGER NOT NULL, new_version INTEGER NOT NULL, rows_deleted INTEGER NOT NULL,"
    " message TEXT NOT NULL, created_by TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,"
    " target_cleanup TEXT NOT NULL DEFAULT '', target_cleanup_at TEXT NOT NULL DEFAULT '')";

// Columns added after the first release of the table: a file written by an
// older proxy gets them with their defaults.
constexpr std::array<const char*, 2> kAddedColumns = {
    "ALTER TABLE moves ADD COLUMN target_cleanup TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE moves ADD COLUMN target_cleanup_at TEXT NOT NULL DEFAULT ''"};

// Column order of the table after id (the bind and read order below).
constexpr const char* kColumns =
    "kind, table_name, buckets, move_key, shard, target_name, what, source, target, state, rows_copied, copy_seconds, "
    "snapshot_position, applied_position, rows_applied, lag_seconds, lag_bytes, verify, pause_ms, cutover_attempts, "
    "old_version, new_version, rows_deleted, message, created_by, created_at, updated_at, target_cleanup, "
    "target_cleanup_at";
constexpr int kColumnCount = 29;

std::string joinBuckets(const std::vector<uint32_t>& buckets) {
  std::string out;
  for (auto b : buckets) out += (out.empty() ? "" : ",") + std::to_string(b);
  return out;
}

std::vector<uint32_t> splitBuckets(std::string_view text) {
  std::vector<uint32_t> out;
  while (!text.empty()) {
    size_t comma = text.find(',');
    auto part = text.substr(0, comma);
    uint32_t v = 0;
    std::from_chars(part.data(), part.data() + part.size(), v);
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

void bindRecord(SqliteQuery& q, const MoveRecord& r) {
  int i = 1;
  q.bind(i++, std::string(routing::moveKindName(r.request.kind)));
  q.bind(i++, r.request.table);
  q.bind(i++, joinBuckets(r.request.buckets));
  q.bind(i++, std::to_string(r.request.key));  // text: SQLite integers are signed
  q.bind(i++, static_cast<int64_t>(r.request.shard));
  q.bind(i++, r.request.target);
  q.bind(i++, r.what);
  q.bind(i++, r.source);
  q.bind(i++, r.target);
  q.bind(i++, std::string(toString(r.state)));
  q.bind(i++, static_cast<int64_t>(r.rows_copied));
  q.bind(i++, r.copy_seconds);
  q.bind(i++, r.snapshot_position);
  q.bind(i++, r.applied_position);
  q.bind(i++, static_cast<int64_t>(r.rows_applied));
  q.bind(i++, r.lag_seconds);
  q.bind(i++, static_cast<int64_t>(r.lag_bytes));
  q.bind(i++, r.verify);
  q.bind(i++, r.pause_ms);
  q.bind(i++, static_cast<int64_t>(r.cutover_attempts));
  q.bind(i++, static_cast<int64_t>(r.old_version));
  q.bind(i++, static_cast<int64_t>(r.new_version));
  q.bind(i++, static_cast<int64_t>(r.rows_deleted));
  q.bind(i++, r.message);
  q.bind(i++, r.created_by);
  q.bind(i++, r.created_at);
  q.bind(i++, r.updated_at);
  q.bind(i++, std::string(toString(r.target_cleanup)));
  q.bind(i++, r.target_cleanup_at);
}

MoveRecord readRecord(SqliteQuery& q) {
  MoveRecord r;
  int i = 0;
  r.id = q.integer(i++);
  r.request.kind = routing::moveKindFrom(q.text(i++)).value_or(routing::MoveKind::kBuckets);
  r.request.table = q.text(i++);
  r.request.buckets = splitBuckets(q.text(i++));
  std::string key = q.text(i++);
  std::from_chars(key.data(), key.data() + key.size(), r.request.key);
  r.request.shard = static_cast<uint32_t>(q.integer(i++));
  r.request.target = q.text(i++);
  r.what = q.text(i++);
  r.source = q.text(i++);
  r.target = q.text(i++);
  r.state = moveStateFrom(q.text(i++)).value_or(MoveState::kFailed);
  r.rows_copied = static_cast<uint64_t>(q.integer(i++));
  r.copy_seconds = q.real(i++);
  r.snapshot_position = q.text(i++);
  r.applied_position = q.text(i++);
  r.rows_applied = static_cast<uint64_t>(q.integer(i++));
  r.lag_seconds = q.real(i++);
  r.lag_bytes = static_cast<uint64_t>(q.integer(i++));
  r.verify = q.text(i++);
  r.pause_ms = q.real(i++);
  r.cutover_attempts = static_cast<uint32_t>(q.integer(i++));
  r.old_version = static_cast<uint64_t>(q.integer(i++));
  r.new_version = static_cast<uint64_t>(q.integer(i++));
  r.rows_deleted = static_cast<uint64_t>(q.integer(i++));
  r.message = q.text(i++);
  r.created_by = q.text(i++);
  r.created_at = q.text(i++);
  r.updated_at = q.text(i++);
  r.target_cleanup = targetCleanupFrom(q.text(i++)).value_or(TargetCleanup::kNone);
  r.target_cleanup_at = q.text(i++);
  return r;
}

std::string placeholders() {
  std::string out;
  for (int i = 1; i <= kColumnCount; ++i) out += (i > 1 ? ", ?" : "?") + std::to_string(i);
  return out;
}

}  // namespace

std::string_view toString(MoveState state) { return kStateNames[static_cast<size_t>(state)]; }

std::optional<MoveState> moveStateFrom(std::string_view text) {
  for (size_t i = 0; i < kStateNames.size(); ++i) {
    if (kStateNames[i] == text) return static_cast<MoveState>(i);
  }
  return std::nullopt;
}

std::string_view toString(TargetCleanup cleanup) { return kCleanupNames[static_cast<size_t>(cleanup)]; }

std::optional<TargetCleanup> targetCleanupFrom(std::string_view text) {
  for (size_t i = 0; i < kCleanupNames.size(); ++i) {
    if (kCleanupNames[i] == text) return static_cast<TargetCleanup>(i);
  }
  return std::nullopt;
}

bool moveFinished(MoveState s) {
  return s == MoveState::kVerified || s == MoveState::kVerifyFailed || s == MoveState::kCleanedUp ||
         s == MoveState::kFailed || s == MoveState::kCancelled;
}

bool beforeSwitch(MoveState s) {
  return s == MoveState::kCopying || s == MoveState::kCatchingUp || s == MoveState::kVerifying ||
         s == MoveState::kCuttingOver || s == MoveState::kFailed || s == MoveState::kCancelled;
}

std::expected<std::unique_ptr<MoveStore>, std::string> MoveStore::open(const std::string& path) {
  if (path.empty()) return std::unexpected(std::string("online moves need the SQLite file of `cache:` in the config"));
  auto db = openSqliteWithSchema(path, kSchema);
  if (!db) return std::unexpected(db.error());
  for (const char* sql : kAddedColumns) {
    char* err = nullptr;
    if (sqlite3_exec(*db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string problem = err ? err : "cannot add a column";
      sqlite3_free(err);
      if (problem.find("duplicate column") != std::string::npos) continue;  // there already
      sqlite3_close(*db);
      return std::unexpected(path + ": " + problem);
    }
  }
  return std::unique_ptr<MoveStore>(new MoveStore(*db));
}

MoveStore::~MoveStore() { sqlite3_close(db_); }

std::expected<void, std::string> MoveStore::save(MoveRecord& r) {
  r.updated_at = utcNowText();
  if (r.created_at.empty()) r.created_at = r.updated_at;
  std::string sql = r.id == 0 ? std::string("INSERT INTO moves (") + kColumns + ") VALUES (" + placeholders() + ")"
                              : std::string("UPDATE moves SET (") + kColumns + ") = (" + placeholders() +
                                    ") WHERE id = ?" + std::to_string(kColumnCount + 1);
  SqliteQuery q(db_, sql);
  if (!q.ok()) return std::unexpected(q.error());
  bindRecord(q, r);
  if (r.id != 0) q.bind(kColumnCount + 1, r.id);
  if (q.step() != SQLITE_DONE) return std::unexpected(q.error());
  if (r.id == 0) r.id = sqlite3_last_insert_rowid(db_);
  return {};
}

std::expected<std::vector<MoveRecord>, std::string> MoveStore::list() {
  SqliteQuery q(db_, std::string("SELECT id, ") + kColumns + " FROM moves ORDER BY id DESC");
  if (!q.ok()) return std::unexpected(q.error());
  std::vector<MoveRecord> out;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) out.push_back(readRecord(q));
  if (rc != SQLITE_DONE) return std::unexpected(q.error());
  return out;
}

std::expected<std::vector<MoveRecord>, std::string> MoveStore::listWithTargetCleanup(TargetCleanup cleanup) {
  SqliteQuery q(db_, std::string("SELECT id, ") + kColumns + " FROM moves WHERE target_cleanup = ?1 ORDER BY id DESC");
  if (!q.ok()) return std::unexpected(q.error());
  q.bind(1, std::string(toString(cleanup)));
  std::vector<MoveRecord> out;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) out.push_back(readRecord(q));
  if (rc != SQLITE_DONE) return std::unexpected(q.error());
  return out;
}

std::expected<std::optional<MoveRecord>, std::string> MoveStore::find(int64_t id) {
  SqliteQuery q(db_, std::string("SELECT id, ") + kColumns + " FROM moves WHERE id = ?1");
  if (!q.ok()) return std::unexpected(q.error());
  q.bind(1, id);
  int rc = q.step();
  if (rc == SQLITE_ROW) return readRecord(q);
  if (rc != SQLITE_DONE) return std::unexpected(q.error());
  return std::nullopt;
}

}  // namespace sp::proxy
