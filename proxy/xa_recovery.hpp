// Recovery of the prepared XA branches of this proxy's global transactions
// (docs/routing.md, "Recovery"): at start-up and every
// transactions.recovery_interval_ms, XA RECOVER on every backend's primary,
// each branch of this proxy's prefix resolved from the decision log
// (proxy/exec/xa_recovery.hpp decides, this runs it). Its own thread and
// connections: a backend that does not answer delays nothing else.
#pragma once
#include <set>
#include <string>
#include <thread>

#include "proxy/core/proxy_context.hpp"
#include "proxy/core/xa_registry.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

class XaRecovery {
 public:
  explicit XaRecovery(ProxyContext& context) : context_(context) {}
  ~XaRecovery() { stop(); }
  XaRecovery(const XaRecovery&) = delete;
  XaRecovery& operator=(const XaRecovery&) = delete;

  void start();
  void stop();

 private:
  awaitable<void> run();
  awaitable<void> pass();
  // One backend's branches; false when it could not be read.
  awaitable<bool> recoverBackend(const std::string& backend, std::set<std::string>& seen,
                                 std::vector<XaRegistry::InDoubt>& in_doubt);

  ProxyContext& context_;
  asio::io_context io_;
  std::thread thread_;
};

}  // namespace sp::proxy
