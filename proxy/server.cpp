#include "proxy/server.hpp"

#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

namespace sp::proxy {

Server::Server(conf::Config config) { context_.config = std::move(config); }

Server::~Server() {
  for (auto& w : workers_) w->stop();
  for (auto& w : workers_) w->join();
}

std::string Server::start() {
  const auto& cfg = context_.config;
  if (!cfg.shard_map_path.empty()) {
    std::vector<std::string> backends;
    for (const auto& b : cfg.backends) backends.push_back(b.name);
    auto map = routing::loadShardMap(cfg.shard_map_path, backends);
    if (!map) return "invalid shard map:\n" + routing::formatShardMapIssues(map.error(), cfg.shard_map_path);
    context_.shard_map.store(*map);
    spdlog::info("shard map {} version {} loaded ({} sharded tables, checksum {})", cfg.shard_map_path,
                 (*map)->version(), (*map)->tables().size(), (*map)->checksum().substr(0, 12));
  }
  unsigned threads = cfg.server.threads ? cfg.server.threads : std::max(1u, std::thread::hardware_concurrency());
  error_code ec;
  auto address = asio::ip::make_address(cfg.server.listen.host, ec);
  if (ec) {
    // A host name: resolve it once at start-up.
    asio::io_context io;
    tcp::resolver resolver(io);
    auto results = resolver.resolve(cfg.server.listen.host, std::to_string(cfg.server.listen.port), ec);
    if (ec || results.empty()) return "cannot resolve listen address " + cfg.server.listen.host;
    address = results.begin()->endpoint().address();
  }
  tcp::endpoint endpoint(address, cfg.server.listen.port);
  for (unsigned i = 0; i < threads; ++i) {
    auto w = std::make_unique<Worker>(context_, i, threads);
    if (auto err = w->listen(endpoint); !err.empty()) {
      return fmt::format("cannot listen on {}:{}: {}", cfg.server.listen.host, cfg.server.listen.port, err);
    }
    workers_.push_back(std::move(w));
  }
  for (auto& w : workers_) w->start();
  spdlog::info("shardproxy listening on {}:{} with {} worker threads; default backend {}", cfg.server.listen.host,
               cfg.server.listen.port, threads, cfg.default_backend);
  return {};
}

void Server::runUntilSignalled() {
  asio::io_context io;
  asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](const error_code& ec, int sig) {
    if (!ec) spdlog::info("received signal {}, shutting down", sig);
  });
  io.run();
  shutdown();
}

void Server::shutdown() {
  context_.shutting_down = true;
  for (auto& w : workers_) w->beginShutdown();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(context_.config.server.shutdown_grace_ms);
  while (context_.sessions.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // Sessions that became idle since the last pass are closed too.
    for (auto& w : workers_) w->beginShutdown();
  }
  if (auto left = context_.sessions.load(); left > 0) {
    spdlog::warn("shutdown grace period over with {} sessions still busy; closing them", left);
  }
  for (auto& w : workers_) w->stop();
  for (auto& w : workers_) w->join();
  spdlog::info("shardproxy stopped");
}

}  // namespace sp::proxy
