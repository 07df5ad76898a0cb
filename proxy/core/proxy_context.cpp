// ProxyContext's configuration is owned here, where conf::Config is complete.
#include "proxy/core/proxy_context.hpp"

#include "conf/config.hpp"

namespace sp::proxy {

ProxyContext::ProxyContext() : config_(std::make_unique<conf::Config>()) {}
ProxyContext::~ProxyContext() = default;

std::optional<conf::BackendConfig> currentPrimary(const ProxyContext& context, std::string_view backend) {
  auto topology = context.topology.load();
  if (!topology) {
    const conf::BackendConfig* b = context.config().findBackend(backend);
    if (b == nullptr) return std::nullopt;
    return *b;
  }
  return primaryPoolConfig(context.config(), *topology, backend);
}

conf::Config configWithCurrentPrimaries(const ProxyContext& context) {
  conf::Config out = context.config();
  for (auto& b : out.backends) {
    if (auto now = currentPrimary(context, b.name)) b = std::move(*now);
  }
  return out;
}

}  // namespace sp::proxy
