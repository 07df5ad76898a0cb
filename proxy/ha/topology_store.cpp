#include "proxy/ha/topology_store.hpp"

#include <sqlite3.h>

#include "proxy/core/sqlite_query.hpp"

namespace sp::proxy {

namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS ha_topology ("
    " backend TEXT PRIMARY KEY,"
    " primary_server TEXT NOT NULL,"
    " replicas TEXT NOT NULL,"  // server names, comma-separated (names are identifiers: no commas)
    " fenced TEXT NOT NULL,"
    " promoted_at TEXT NOT NULL,"
    " changed_unix_ms INTEGER NOT NULL,"
    " change TEXT NOT NULL)";

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::expected<std::unique_ptr<TopologyStore>, std::string> TopologyStore::open(const std::string& path) {
  auto db = openSqliteWithSchema(path, kSchema);
  if (!db) return std::unexpected(db.error());
  return std::unique_ptr<TopologyStore>(new TopologyStore(*db));
}

TopologyStore::~TopologyStore() { sqlite3_close(db_); }

std::expected<std::vector<GroupTopology>, std::string> TopologyStore::load() {
  std::vector<GroupTopology> out;
  SqliteQuery q(db_, "SELECT backend, primary_server, replicas, fenced, changed_unix_ms, change, promoted_at FROM ha_topology");
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) {
    GroupTopology g;
    g.backend = q.text(0);
    g.primary = q.text(1);
    g.replicas = split(q.text(2));
    g.fenced = split(q.text(3));
    g.changed_unix_ms = q.integer(4);
    g.change = q.text(5);
    g.promoted_at = q.text(6);
    out.push_back(std::move(g));
  }
  if (rc != SQLITE_DONE) return std::unexpected("reading ha_topology: " + q.error());
  return out;
}

std::string TopologyStore::save(const GroupTopology& g) {
  SqliteQuery q(db_,
                "INSERT OR REPLACE INTO ha_topology (backend, primary_server, replicas, fenced, changed_unix_ms, change, "
                "promoted_at) VALUES (?, ?, ?, ?, ?, ?, ?)");
  q.bind(1, g.backend);
  q.bind(2, g.primary);
  q.bind(3, joinServerNames(g.replicas));
  q.bind(4, joinServerNames(g.fenced));
  q.bind(5, g.changed_unix_ms);
  q.bind(6, g.change);
  q.bind(7, g.promoted_at);
  if (q.step() != SQLITE_DONE) return "writing ha_topology: " + q.error();
  return {};
}

}  // namespace sp::proxy
