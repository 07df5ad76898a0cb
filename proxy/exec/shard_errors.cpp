#include "proxy/exec/shard_errors.hpp"

#include <fmt/format.h>

#include "proxy/net/client_errors.hpp"

namespace sp::proxy {

std::string shardLabel(const routing::RouteTarget& t) {
  return fmt::format("{} ({} on backend {})", t.shard.empty() ? t.physical_table : t.shard, t.physical_table, t.backend);
}

protocol::ErrPacket relabelShardError(const routing::RouteTarget& target, const protocol::ErrPacket& error) {
  return protocol::ErrPacket{error.error_code, error.sql_state,
                             fmt::format("shardproxy: shard {}: {}", shardLabel(target), error.message)};
}

protocol::ErrPacket shardFailure(const routing::RouteTarget& target, std::string_view why) {
  return shardFailure(target, why, client_error::kBackendLost);
}

protocol::ErrPacket shardFailure(const routing::RouteTarget& target, std::string_view why, client_error::Code code) {
  return client_error::make(code, fmt::format("shardproxy: shard {} failed: {}", shardLabel(target), why));
}

protocol::ErrPacket shardFailure(const routing::RouteTarget& target, ChannelError error,
                                 std::chrono::milliseconds timeout, std::string_view when) {
  switch (error) {
    case ChannelError::kTimeout: {
      auto err = shardFailure(target, fmt::format("no answer within {} ms (scatter.shard_timeout_ms){}; its "
                                                  "connection was closed and its query killed",
                                                  timeout.count(), when));
      err.error_code = client_error::kShardTimeout.number;
      err.sql_state = client_error::kShardTimeout.sql_state;
      return err;
    }
    case ChannelError::kMalformed:
      return shardFailure(target, "malformed response");
    case ChannelError::kLost:
      break;
  }
  return shardFailure(target, fmt::format("connection lost{}", when));
}

}  // namespace sp::proxy
