// The proxy's client of etcd's v3 JSON gateway (issue 19): HTTP/1.1 POSTs over
// Asio, one connection per call (loopback or LAN: a connect costs less than
// keeping pools of them healthy), failing over across the configured
// endpoints. The bytes are framed and parsed by coord/ (pure, unit-tested);
// this file only moves them, with a deadline on every exchange.
#pragma once
#include <atomic>
#include <chrono>
#include <expected>
#include <memory>
#include <string>
#include <string_view>

#include "conf/fleet_config.hpp"
#include "coord/http_codec.hpp"
#include "coord/line_splitter.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

// A streaming response (/v3/watch): one JSON object per line, until the
// connection ends. Reads have no deadline (a quiet key sends nothing); the
// owner closes the stream to stop it.
class EtcdStream {
 public:
  // `reader` has read the head; `early` holds the body bytes that came with it.
  EtcdStream(tcp::socket socket, coord::HttpResponseReader reader, std::string early, uint64_t max_bytes,
             std::string endpoint);
  // The next line; an error when the stream ended or broke.
  awaitable<std::expected<std::string, std::string>> nextLine();
  void close();
  const std::string& endpoint() const { return endpoint_; }

 private:
  tcp::socket socket_;
  coord::HttpResponseReader reader_;
  coord::LineSplitter lines_;
  std::string endpoint_;
};

class EtcdClient {
 public:
  explicit EtcdClient(const conf::FleetConfig& config) : config_(config) {}

  // POST `body` to `target` ("/v3/kv/range"), on the endpoint that answered
  // (by value: the coroutine owns them, so a caller may return the awaitable)
  // last, then on the others in turn. The answer's body when the status is
  // 200; otherwise why no endpoint answered (every endpoint's reason).
  // `reached` (optional) is set when some endpoint accepted the connection:
  // left false, the request certainly never reached etcd (a write that must
  // know whether it may have happened: FleetXaStore's decisions).
  awaitable<std::expected<std::string, std::string>> call(std::string target, std::string body,
                                                          bool* reached = nullptr);
  // Opens a streaming POST the same way; the stream's head (status 200) has
  // been read.
  awaitable<std::expected<std::unique_ptr<EtcdStream>, std::string>> stream(std::string target,
                                                                          std::string body);

  const conf::FleetConfig& config() const { return config_; }

 private:
  awaitable<std::expected<std::string, std::string>> callOne(const conf::HostPort& endpoint, std::string_view target,
                                                             const std::string& body, bool* reached);
  awaitable<std::expected<std::unique_ptr<EtcdStream>, std::string>> streamOne(const conf::HostPort& endpoint,
                                                                              std::string_view target,
                                                                              const std::string& body);
  // Tries `one(endpoint)` on the preferred endpoint, then the others.
  template <class T, class One>
  awaitable<std::expected<T, std::string>> failover(One one);

  conf::FleetConfig config_;
  std::atomic<size_t> preferred_{0};  // index of the endpoint that answered last
};

// Runs one EtcdClient call to completion on a private io_context: for the
// admin thread, which must not wait on the fleet agent's thread (the agent
// may be waiting for the shard-map manager the admin thread holds).
template <class T>
T runEtcdCall(std::function<awaitable<T>(EtcdClient&)> fn, EtcdClient& client);

}  // namespace sp::proxy

#include "proxy/fleet/etcd_client_inl.hpp"
