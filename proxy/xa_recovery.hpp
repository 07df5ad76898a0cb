// Recovery of the prepared XA branches of this proxy's global transactions
// (docs/routing.md, "Recovery"): at start-up and every
// transactions.recovery_interval_ms, XA RECOVER on every backend's primary,
// each branch of this proxy's prefix resolved from the decision log
// (proxy/exec/xa_recovery.hpp decides, this runs it). In a fleet the
// decisions and the members are read from etcd once per pass, and a branch
// of another member is finished once that member is gone
// (proxy/exec/xa_fleet_resolution.hpp decides). Its own thread and
// connections: a backend that does not answer delays nothing else.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "proxy/core/proxy_context.hpp"
#include "proxy/core/xa_fleet_store.hpp"
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
  struct Pass {
    std::set<std::string> seen;  // gtrids some backend listed
    std::vector<XaRegistry::InDoubt> in_doubt;
    const XaFleetSnapshot* fleet = nullptr;  // in a fleet, when etcd was read
    std::string etcd_problem;                // in a fleet, why it was not
  };
  // One backend's branches; false when it could not be read or a branch not resolved.
  awaitable<bool> recoverBackend(const std::string& backend, Pass& pass);
  // What to do with a fleet id's branch (settles it in etcd when it has no
  // record); nullopt: it waits, `note` says why.
  std::optional<bool> fleetCommit(const std::string& gtrid, const std::string& owner, std::string& note,
                                  const Pass& pass);
  void cleanUpFleet(const Pass& pass);

  ProxyContext& context_;
  bool etcd_unreadable_ = false;  // the last pass could not read etcd (logged once per outage)
  asio::io_context io_;
  std::thread thread_;
};

}  // namespace sp::proxy
