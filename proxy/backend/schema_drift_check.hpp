// Reads information_schema on every backend the shard map uses and compares
// the physical tables of each logical table (routing/schema_drift.hpp). One
// connection of its own per backend, opened and closed here: the admin port
// (SHOW SCHEMA DRIFT) and start-up run it, never a client session.
#pragma once
#include <vector>

#include "proxy/net/net.hpp"
#include "routing/schema_drift.hpp"

namespace sp::conf {
struct Config;
}  // namespace sp::conf

namespace sp::proxy {

awaitable<std::vector<routing::DriftRow>> checkSchemaDrift(const conf::Config& config,
                                                           const routing::CompiledShardMap& map);

// Start-up: logs every difference as a warning (the proxy starts anyway).
awaitable<void> logSchemaDrift(const conf::Config& config, std::shared_ptr<const routing::CompiledShardMap> map);

}  // namespace sp::proxy
