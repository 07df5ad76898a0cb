#include "proxy/core/sqlite_query.hpp"

#include <filesystem>

namespace sp::proxy {

std::expected<sqlite3*, std::string> openSqliteWithSchema(const std::string& path, const char* schema) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) !=
      SQLITE_OK) {
    std::string problem = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return std::unexpected("cannot open " + path + ": " + problem);
  }
  sqlite3_busy_timeout(db, 2000);
  char* err = nullptr;
  if (sqlite3_exec(db, schema, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string problem = err ? err : "cannot create the tables";
    sqlite3_free(err);
    sqlite3_close(db);
    return std::unexpected(path + ": " + problem);
  }
  return db;
}

}  // namespace sp::proxy
