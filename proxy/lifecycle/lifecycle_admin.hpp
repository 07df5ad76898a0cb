// Runs one data-lifecycle command of the admin port (lifecycle_command.hpp)
// and builds its answer. Asynchronous: the commands talk to every backend.
#pragma once
#include <string>

#include "proxy/core/admin_reply.hpp"
#include "proxy/lifecycle/lifecycle_command.hpp"
#include "proxy/net/net.hpp"
#include "proxy/core/proxy_context.hpp"

namespace sp::proxy {

awaitable<AdminReply> executeLifecycleCommand(const LifecycleCommand& command, ProxyContext& context,
                                              const std::string& user);

}  // namespace sp::proxy
