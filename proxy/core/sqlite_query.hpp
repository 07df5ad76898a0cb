// Small helpers over the SQLite C API shared by the stores that keep rows in
// the proxy's SQLite file (`cache:`): archive runs, online moves.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <expected>
#include <string>

namespace sp::proxy {

// Owns a prepared statement; binds text and integers by position.
class SqliteQuery {
 public:
  SqliteQuery(sqlite3* db, const std::string& sql) : db_(db) { sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr); }
  ~SqliteQuery() { sqlite3_finalize(stmt_); }
  SqliteQuery(const SqliteQuery&) = delete;
  SqliteQuery& operator=(const SqliteQuery&) = delete;
  bool ok() const { return stmt_ != nullptr; }
  void bind(int i, const std::string& v) { sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  void bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  int step() { return sqlite3_step(stmt_); }
  std::string text(int c) {
    auto* p = sqlite3_column_text(stmt_, c);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, c))) : "";
  }
  int64_t integer(int c) { return sqlite3_column_int64(stmt_, c); }
  double real(int c) { return sqlite3_column_double(stmt_, c); }
  std::string error() const { return sqlite3_errmsg(db_); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Opens (creating the parent directory) `path` and runs `schema` (CREATE
// TABLE IF NOT EXISTS ...); the handle or why not.
std::expected<sqlite3*, std::string> openSqliteWithSchema(const std::string& path, const char* schema);

}  // namespace sp::proxy
