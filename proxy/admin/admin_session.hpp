// One connection to the admin port: login against admin_users, then the
// command loop (COM_QUERY with the admin language, COM_PING, COM_INIT_DB,
// COM_QUIT). Commands are parsed by admin_command.hpp and answered by
// admin_results.cpp; this file only moves packets.
#pragma once
#include <cstdint>
#include <string>

#include "proxy/admin/admin_results.hpp"
#include "proxy/net/net.hpp"
#include "proxy/net/packet_stream.hpp"
#include "proxy/core/proxy_context.hpp"

namespace sp::proxy {

class ShardMapManager;
class AdminServer;

class AdminSession {
 public:
  AdminSession(ProxyContext& context, ShardMapManager& maps, const AdminServer& server, tcp::socket socket,
               uint32_t connection_id);
  awaitable<void> run();

 private:
  awaitable<bool> login();
  awaitable<bool> dispatch(protocol::ByteView payload, uint8_t seq);
  void queueOk(uint8_t seq);
  void queueError(uint8_t seq, uint16_t code, const char* sql_state, const std::string& message);
  awaitable<void> queueQuery(std::string_view sql, uint8_t seq);
  void queueReply(const AdminReply& reply, uint8_t seq);
  // SHOW SCHEMA DRIFT: reads every backend (proxy/backend/schema_drift_check.hpp).
  awaitable<void> queueSchemaDrift(uint8_t seq);

  ProxyContext& context_;
  ShardMapManager& maps_;
  const AdminServer& server_;
  PacketStream client_;
  uint32_t connection_id_;
  uint32_t capabilities_ = 0;
  uint32_t mariadb_capabilities_ = 0;  // column definitions carry extended type info when set
  std::string user_;
  std::string peer_;
  bool loopback_ = false;
};

}  // namespace sp::proxy
