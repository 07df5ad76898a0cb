// XaFleetStore over etcd (proxy/core/xa_fleet_store.hpp; docs/routing.md,
// "In a fleet"): the commit decisions of this proxy's global transactions
// under <prefix>/xa/decisions/ (coord/xa_records.hpp), written fenced by
// this proxy's member key and lease, read by every proxy's recovery.
// Created at start-up, before any session can commit; the fleet agent,
// whose lease fences the writes, is attached once it exists (until then,
// and whenever the agent has no session with etcd, a commit is refused).
// Each call runs on a private io_context (runEtcdCall): thread-safe.
#pragma once
#include <atomic>

#include "conf/fleet_config.hpp"
#include "proxy/core/xa_fleet_store.hpp"
#include "proxy/fleet/etcd_client.hpp"

namespace sp::proxy {

class FleetAgent;

class FleetXaStore final : public XaFleetStore {
 public:
  explicit FleetXaStore(const conf::FleetConfig& config) : config_(config), client_(config_) {}
  void attach(const FleetAgent* agent) { agent_.store(agent); }

  const std::string& member() const override { return config_.name; }
  XaDecisionWrite recordCommit(const std::string& gtrid, const std::vector<std::string>& branches) override;
  void forget(const std::string& gtrid) override;
  std::expected<XaFleetSnapshot, std::string> snapshot() override;
  std::expected<XaStoredOutcome, std::string> settle(const std::string& gtrid) override;
  void remove(const std::string& gtrid, int64_t create_revision) override;

 private:
  std::expected<std::string, std::string> call(const std::string& target, const std::string& body,
                                               bool* reached = nullptr);
  int64_t lease() const;

  conf::FleetConfig config_;
  EtcdClient client_;
  std::atomic<const FleetAgent*> agent_{nullptr};
};

}  // namespace sp::proxy
