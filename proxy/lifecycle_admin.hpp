// Runs one data-lifecycle command of the admin port (lifecycle_command.hpp)
// and builds its answer. Asynchronous: the commands talk to every backend.
#pragma once
#include <string>

#include "proxy/admin_results.hpp"
#include "proxy/lifecycle_command.hpp"
#include "proxy/net.hpp"
#include "proxy/proxy_context.hpp"

namespace sp::proxy {

awaitable<AdminReply> executeLifecycleCommand(const LifecycleCommand& command, ProxyContext& context,
                                              const std::string& user);

}  // namespace sp::proxy
