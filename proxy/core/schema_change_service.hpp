// What a client session asks of the schema-change runner (proxy/schema/),
// which it may not link: the interface is owned here and implemented there,
// the way the map publisher and the write hold are.
#pragma once
#include <string>

#include "proxy/core/admin_reply.hpp"
#include "proxy/net/net.hpp"
#include "routing/schema_change.hpp"

namespace sp::proxy {

class SchemaChangeService {
 public:
  virtual ~SchemaChangeService() = default;
  // Runs a change of a logical table on every physical table (from any
  // thread; the change runs on the runner's own). Completes when every table
  // is done (the change's row), when one failed (an error naming it), or at
  // once under schema.async (the change's row, state running).
  virtual awaitable<AdminReply> submit(routing::LogicalDdl ddl, std::string who) = 0;
};

}  // namespace sp::proxy
