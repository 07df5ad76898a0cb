// coord::FenceStore over etcd's JSON gateway (proxy/fleet/etcd_client.hpp): the
// fenced cut-over's puts, ranges and deletes. Each call runs to completion on
// a private io_context (runEtcdCall) and blocks its thread for at most the
// endpoints × fleet.etcd.request_timeout_ms: the fleet agent calls it right
// after etcd answered its watch, the move thread between polls.
#pragma once
#include "coord/fleet_fence.hpp"
#include "proxy/fleet/etcd_client.hpp"

namespace sp::proxy {

class EtcdFenceStore final : public coord::FenceStore {
 public:
  explicit EtcdFenceStore(EtcdClient& client) : client_(client) {}

  std::expected<int64_t, std::string> put(const std::string& key, const std::string& value, int64_t lease) override;
  std::expected<std::vector<std::pair<std::string, std::string>>, std::string> list(const std::string& prefix) override;
  std::expected<void, std::string> removePrefix(const std::string& prefix) override;

 private:
  std::expected<std::string, std::string> call(const std::string& target, const std::string& body);
  EtcdClient& client_;
};

}  // namespace sp::proxy
