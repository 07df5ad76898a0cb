// KILL execution: KILL QUERY for the server threads that run a statement of
// the session being killed, each over a connection of the proxy's own (the
// connection running the query is busy, or already closed by the proxy, which
// does not stop the server from running the query to its end). A thread that
// ended meanwhile (1094) counts as done. The session finds the threads
// (Worker::aimKill) and answers the client; this part only talks to shards.
#pragma once
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "conf/backend_config.hpp"
#include "proxy/net/net.hpp"
#include "proxy/exec/shard_channel.hpp"

namespace sp::proxy {

struct KillTarget {
  conf::BackendConfig backend;
  uint32_t thread_id = 0;
};

// KILL QUERY <thread_id> on `channel`: "" when done, else why not.
awaitable<std::string> killQueryOn(ShardChannel& channel, uint32_t thread_id);

// Opens a channel of its own to a backend (never a pooled connection), or says why it cannot.
using KillChannelOpener =
    std::function<awaitable<std::expected<std::unique_ptr<ShardChannel>, std::string>>(const conf::BackendConfig&)>;

struct KillOutcome {
  size_t interrupted = 0;
  std::vector<std::string> failures;  // "backend db1 thread 42: <why>"
};

// One target: "" when its query was killed, else why not.
awaitable<std::string> killThread(const KillTarget& target, const KillChannelOpener& open);

awaitable<KillOutcome> executeKill(std::span<const KillTarget> targets, const KillChannelOpener& open);

}  // namespace sp::proxy
