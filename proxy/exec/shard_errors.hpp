// How the executions word a shard's failure for the client: the shard named,
// the server's own code and SQLSTATE kept for its errors (clients react as to
// a server), the proxy's codes for lost connections and timeouts.
#pragma once
#include <chrono>
#include <string>
#include <string_view>

#include "protocol/generic_packets.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/exec/shard_channel.hpp"
#include "routing/plan.hpp"

namespace sp::proxy {

// "s3 (msg_3 on backend db1)"
std::string shardLabel(const routing::RouteTarget& target);
// The server's error, its message prefixed with "shardproxy: shard <label>: ".
protocol::ErrPacket relabelShardError(const routing::RouteTarget& target, const protocol::ErrPacket& error);
// "shardproxy: shard <label> failed: <why>" as 9002 (9003 for a timeout).
protocol::ErrPacket shardFailure(const routing::RouteTarget& target, ChannelError error,
                                 std::chrono::milliseconds timeout, std::string_view when);
// The same with a reason of the proxy's own (malformed data, a merge error).
protocol::ErrPacket shardFailure(const routing::RouteTarget& target, std::string_view why);
// The same under another code (9005: the shard's columns differ from the others').
protocol::ErrPacket shardFailure(const routing::RouteTarget& target, std::string_view why, client_error::Code code);

}  // namespace sp::proxy
