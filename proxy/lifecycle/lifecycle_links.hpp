// Backend connections of one data-lifecycle job (SHOW/ENSURE PARTITIONS,
// archive runs, upkeep): one private connection per backend, opened on first
// use and closed with the object. Not taken from the workers' pools: a job
// runs long DDL or batches on the admin or upkeep thread, and must not hold
// a connection that application statements wait for.
#pragma once
#include <expected>
#include <map>
#include <memory>
#include <string>

#include "proxy/core/proxy_context.hpp"
#include "proxy/backend/backend_connection.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

class LifecycleLinks {
 public:
  explicit LifecycleLinks(const ProxyContext& context) : context_(context) {}
  ~LifecycleLinks();
  LifecycleLinks(const LifecycleLinks&) = delete;
  LifecycleLinks& operator=(const LifecycleLinks&) = delete;

  // Text rows of one statement on `backend`; the error text names the backend.
  awaitable<std::expected<BackendConnection::TextRows, std::string>> rows(const std::string& backend,
                                                                          std::string_view sql);
  // One statement; its OK (affected rows) or the error text.
  awaitable<std::expected<protocol::OkPacket, std::string>> run(const std::string& backend, std::string_view sql);

 private:
  awaitable<std::expected<BackendConnection*, std::string>> link(const std::string& backend);

  const ProxyContext& context_;
  std::map<std::string, std::unique_ptr<BackendConnection>> links_;
};

}  // namespace sp::proxy
