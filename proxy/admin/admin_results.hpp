// Executes one parsed admin command and builds its answer: a result set, a
// bare OK, or an ERR. Synchronous (it runs on the admin thread; reloads take
// the shard-map manager's mutex); no packets are formatted here.
#pragma once
#include <cstdint>
#include <string>
#include <variant>

#include "proxy/admin/admin_command.hpp"
#include "proxy/core/admin_reply.hpp"
#include "proxy/core/proxy_context.hpp"

namespace sp::proxy {

class ShardMapManager;


struct AdminEnv {
  ProxyContext& context;
  ShardMapManager& maps;
  std::string user;          // the admin account
  std::string peer;          // host:port
  uint32_t connection_id = 0;
  uint32_t admin_sessions = 0;
};

AdminReply executeAdminCommand(const AdminCommand& command, AdminEnv& env);

// The ERR text for a refused reload/rollback: the summary and as many
// problems as fit in `budget` bytes (clients keep about 512), then a pointer
// to SHOW SHARD MAP ERRORS for the rest.
std::string refusalMessage(const std::string& summary, const std::vector<std::string>& problems, size_t budget = 500);

}  // namespace sp::proxy
