// A worker thread: one io_context, its own listening socket (SO_REUSEPORT, so
// the kernel spreads new connections over workers), its own backend pools,
// and the client sessions it accepted. Nothing here is shared with other
// workers except ProxyContext, so the hot path takes no locks.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>

#include "proxy/backend_pool.hpp"
#include "proxy/net.hpp"
#include "proxy/proxy_context.hpp"

namespace sp::proxy {

class ClientSession;

class Worker {
 public:
  Worker(ProxyContext& context, unsigned index, unsigned worker_count);
  ~Worker();

  // Binds the listener; returns an error message on failure.
  std::string listen(const tcp::endpoint& endpoint);
  void start();            // starts the thread
  void beginShutdown();    // stop accepting; close idle sessions (thread-safe)
  void stop();             // stop the io_context (thread-safe)
  void join();

  asio::io_context& io() { return io_; }
  ProxyContext& context() { return context_; }
  BackendPool* pool(std::string_view name);
  BackendPool* defaultPool() { return default_pool_; }
  unsigned index() const { return index_; }

  void add(ClientSession* s) { sessions_.insert(s); }
  void remove(ClientSession* s) { sessions_.erase(s); }
  size_t sessionCount() const { return sessions_.size(); }

 private:
  awaitable<void> acceptLoop();

  ProxyContext& context_;
  unsigned index_;
  asio::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  std::map<std::string, std::unique_ptr<BackendPool>, std::less<>> pools_;
  BackendPool* default_pool_ = nullptr;
  std::unordered_set<ClientSession*> sessions_;
  std::thread thread_;
};

}  // namespace sp::proxy
