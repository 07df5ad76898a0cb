// KILL QUERY on a backend server thread, over a connection of its own: the
// connection running the query is busy (or already closed by the proxy, which
// does not stop the server from running the query to its end).
#pragma once
#include <cstdint>

#include "conf/backend_config.hpp"
#include "proxy/exec/kill_execution.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

// A connection of the proxy's own to `backend` for KILL QUERY (kill_execution.hpp).
awaitable<std::expected<std::unique_ptr<ShardChannel>, std::string>> openKillChannel(
    const conf::BackendConfig& backend);

// Sends KILL QUERY <thread_id> to `backend` and waits for the answer. A thread
// that already ended (1094) counts as done. Returns an error message, or "".
awaitable<std::string> killBackendQuery(conf::BackendConfig backend, uint32_t thread_id);

// The same, detached (the caller does not wait); failures are logged.
void spawnKillBackendQuery(const asio::any_io_executor& executor, const conf::BackendConfig& backend,
                           uint32_t thread_id);

}  // namespace sp::proxy
