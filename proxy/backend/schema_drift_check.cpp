#include "proxy/backend/schema_drift_check.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "conf/config.hpp"
#include "proxy/backend/backend_connection.hpp"

namespace sp::proxy {

awaitable<std::vector<routing::DriftRow>> checkSchemaDrift(const conf::Config& config,
                                                           const routing::CompiledShardMap& map) {
  std::map<std::string, routing::BackendShapes> shapes;
  std::map<std::string, std::string> unreadable;
  for (const auto& name : map.referencedBackends()) {
    auto backend = std::find_if(config.backends.begin(), config.backends.end(),
                                [&](const conf::BackendConfig& b) { return b.name == name; });
    if (backend == config.backends.end()) {
      unreadable[name] = "not in the configuration";
      continue;
    }
    auto conn = co_await BackendConnection::open(*backend, 0, config.server.max_packet_bytes);
    if (!conn) {
      unreadable[name] = conn.error().message;
      continue;
    }
    auto columns = co_await (*conn)->queryRows(routing::kDriftColumnsQuery);
    if (!columns) {
      unreadable[name] = columns.error().message;
      continue;
    }
    auto indexes = co_await (*conn)->queryRows(routing::kDriftIndexesQuery);
    if (!indexes) {
      unreadable[name] = indexes.error().message;
      continue;
    }
    shapes[name] = routing::shapesFromRows(*columns, *indexes);
  }
  co_return routing::findSchemaDrift(map, shapes, unreadable);
}

awaitable<void> logSchemaDrift(const conf::Config& config, std::shared_ptr<const routing::CompiledShardMap> map) {
  if (!map) co_return;
  auto rows = co_await checkSchemaDrift(config, *map);
  for (const auto& r : rows) {
    spdlog::warn("schema drift: table {}: {} on backend {}: {} (compared with {}); see SHOW SCHEMA DRIFT",
                 r.table, r.physical_table, r.backend, r.difference, r.reference);
  }
  if (rows.empty()) {
    spdlog::info("schema drift check: the physical tables of {} logical tables agree", map->tables().size());
  }
}

}  // namespace sp::proxy
