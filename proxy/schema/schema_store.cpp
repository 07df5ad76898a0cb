#include "proxy/schema/schema_store.hpp"

#include <sqlite3.h>

#include <map>

#include "proxy/core/sqlite_query.hpp"

namespace sp::proxy {

namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS schema_changes ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, table_name TEXT NOT NULL, kind TEXT NOT NULL, statement TEXT NOT NULL,"
    " state TEXT NOT NULL, message TEXT NOT NULL, shapes_before TEXT NOT NULL, created_by TEXT NOT NULL,"
    " created_at TEXT NOT NULL, updated_at TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS schema_change_tables ("
    " change_id INTEGER NOT NULL, seq INTEGER NOT NULL, backend TEXT NOT NULL, table_name TEXT NOT NULL,"
    " role TEXT NOT NULL, state TEXT NOT NULL, algorithm TEXT NOT NULL, seconds REAL NOT NULL, error TEXT NOT NULL,"
    " PRIMARY KEY (change_id, seq))";

std::expected<void, std::string> exec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    return std::unexpected(message);
  }
  return {};
}

}  // namespace

std::expected<std::unique_ptr<SchemaStore>, std::string> SchemaStore::open(const std::string& path) {
  auto db = openSqliteWithSchema(path, kSchema);
  if (!db) return std::unexpected(db.error());
  return std::unique_ptr<SchemaStore>(new SchemaStore(*db));
}

SchemaStore::~SchemaStore() { sqlite3_close(db_); }

std::expected<void, std::string> SchemaStore::save(SchemaChangeRecord& r) {
  if (auto begun = exec(db_, "BEGIN IMMEDIATE"); !begun) return begun;
  auto fail = [&](std::string why) -> std::expected<void, std::string> {
    exec(db_, "ROLLBACK");
    return std::unexpected("saving schema change: " + why);
  };
  {
    SqliteQuery q(db_, r.id == 0 ? "INSERT INTO schema_changes (table_name, kind, statement, state, message, "
                                   "shapes_before, created_by, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)"
                                 : "UPDATE schema_changes SET table_name=?, kind=?, statement=?, state=?, message=?, "
                                   "shapes_before=?, created_by=?, created_at=?, updated_at=? WHERE id=?");
    if (!q.ok()) return fail(q.error());
    int i = 1;
    q.bind(i++, r.table);
    q.bind(i++, r.kind);
    q.bind(i++, r.statement);
    q.bind(i++, std::string(toString(r.state)));
    q.bind(i++, r.message);
    q.bind(i++, r.shapes_before);
    q.bind(i++, r.created_by);
    q.bind(i++, r.created_at);
    q.bind(i++, r.updated_at);
    if (r.id != 0) q.bind(i++, r.id);
    if (q.step() != SQLITE_DONE) return fail(q.error());
    if (r.id == 0) r.id = sqlite3_last_insert_rowid(db_);
  }
  {
    SqliteQuery del(db_, "DELETE FROM schema_change_tables WHERE change_id = ?");
    del.bind(1, r.id);
    if (del.step() != SQLITE_DONE) return fail(del.error());
  }
  for (size_t seq = 0; seq < r.tables.size(); ++seq) {
    const TableChange& t = r.tables[seq];
    SqliteQuery q(db_, "INSERT INTO schema_change_tables (change_id, seq, backend, table_name, role, state, "
                       "algorithm, seconds, error) VALUES (?,?,?,?,?,?,?,?,?)");
    int i = 1;
    q.bind(i++, r.id);
    q.bind(i++, static_cast<int64_t>(seq));
    q.bind(i++, t.backend);
    q.bind(i++, t.table);
    q.bind(i++, t.role);
    q.bind(i++, std::string(toString(t.state)));
    q.bind(i++, t.algorithm);
    q.bind(i++, t.seconds);
    q.bind(i++, t.error);
    if (q.step() != SQLITE_DONE) return fail(q.error());
  }
  if (auto committed = exec(db_, "COMMIT"); !committed) return fail(committed.error());
  return {};
}

std::expected<std::vector<SchemaChangeRecord>, std::string> SchemaStore::list() {
  std::vector<SchemaChangeRecord> out;
  std::map<int64_t, size_t> index;
  SqliteQuery q(db_, "SELECT id, table_name, kind, statement, state, message, shapes_before, created_by, created_at, "
                     "updated_at FROM schema_changes ORDER BY id");
  if (!q.ok()) return std::unexpected(q.error());
  while (q.step() == SQLITE_ROW) {
    SchemaChangeRecord r;
    int c = 0;
    r.id = q.integer(c++);
    r.table = q.text(c++);
    r.kind = q.text(c++);
    r.statement = q.text(c++);
    r.state = schemaChangeStateNamed(q.text(c++)).value_or(SchemaChangeState::kFailed);
    r.message = q.text(c++);
    r.shapes_before = q.text(c++);
    r.created_by = q.text(c++);
    r.created_at = q.text(c++);
    r.updated_at = q.text(c++);
    index[r.id] = out.size();
    out.push_back(std::move(r));
  }
  SqliteQuery t(db_, "SELECT change_id, backend, table_name, role, state, algorithm, seconds, error "
                     "FROM schema_change_tables ORDER BY change_id, seq");
  if (!t.ok()) return std::unexpected(t.error());
  while (t.step() == SQLITE_ROW) {
    auto it = index.find(t.integer(0));
    if (it == index.end()) continue;
    TableChange tc;
    tc.backend = t.text(1);
    tc.table = t.text(2);
    tc.role = t.text(3);
    tc.state = tableChangeStateNamed(t.text(4)).value_or(TableChangeState::kPending);
    tc.algorithm = t.text(5);
    tc.seconds = t.real(6);
    tc.error = t.text(7);
    out[it->second].tables.push_back(std::move(tc));
  }
  return out;
}

}  // namespace sp::proxy
