#include "proxy/fleet/etcd_fence_store.hpp"

#include "coord/etcd_messages.hpp"

namespace sp::proxy {

std::expected<std::string, std::string> EtcdFenceStore::call(const std::string& target, const std::string& body) {
  return runEtcdCall<std::expected<std::string, std::string>>(
      [&](EtcdClient& c) { return c.call(target, body); }, client_);
}

std::expected<int64_t, std::string> EtcdFenceStore::put(const std::string& key, const std::string& value,
                                                        int64_t lease) {
  auto answer = call("/v3/kv/put", coord::etcdPutRequest(key, value, lease));
  if (!answer) return std::unexpected(answer.error());
  auto header = coord::parseEtcdPut(*answer);
  if (!header) return std::unexpected(header.error());
  return header->revision;
}

std::expected<std::vector<std::pair<std::string, std::string>>, std::string> EtcdFenceStore::list(
    const std::string& prefix) {
  auto answer = call("/v3/kv/range", coord::etcdRangeRequest(prefix, true));
  if (!answer) return std::unexpected(answer.error());
  auto range = coord::parseEtcdRange(*answer);
  if (!range) return std::unexpected(range.error());
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& kv : range->kvs) out.emplace_back(std::move(kv.key), std::move(kv.value));
  return out;
}

std::expected<void, std::string> EtcdFenceStore::removePrefix(const std::string& prefix) {
  auto answer = call("/v3/kv/deleterange", coord::etcdDeleteRequest(prefix, true));
  if (!answer) return std::unexpected(answer.error());
  if (auto header = coord::parseEtcdPut(*answer); !header) return std::unexpected(header.error());
  return {};
}

}  // namespace sp::proxy
