#include "proxy/ha/replica_monitor.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "conf/config.hpp"
#include "proxy/backend/backend_connection.hpp"
#include "proxy/backend/binlog_stream.hpp"
#include "proxy/ha/server_probe.hpp"

namespace sp::proxy {

using namespace boost::asio::experimental::awaitable_operators;

namespace {

int64_t probeUnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The server answered but the probe could not use it: its ERR (an account
// refused, a privilege, 1040), or a TLS handshake whose certificate the
// proxy does not accept (BackendConnection::open, "TLS to the backend: ...").
// The server is alive: it is not marked down, and statements get the
// connect error itself, which says what to fix.
bool answeredButRefused(const BackendError& e) {
  return e.kind == BackendError::Kind::kServer ||
         (e.kind == BackendError::Kind::kConnect && e.message.starts_with("TLS to the backend: "));
}

}  // namespace

ReplicaMonitor::ReplicaMonitor(asio::io_context& io, ProxyContext& context, Hooks hooks)
    : io_(io), context_(context), hooks_(std::move(hooks)) {
  // Every backend, with replicas or not: a single server that stops
  // answering must be noticed as well (its pools are marked down).
  for (const auto& b : context_.config().backends) appendBackend(b);
}

void ReplicaMonitor::appendBackend(const conf::BackendConfig& b) {
  const size_t first = servers_.size();
  ServerHealth primary;
  primary.backend = b.name;
  primary.name = b.name;
  primary.address = conf::formatHostPort(b.address);
  primary.primary = true;
  servers_.push_back(std::move(primary));
  alone_.push_back(b.replicas.empty());
  // The monitor reads replication state: the replication account
  // (SLAVE MONITOR, BINLOG MONITOR), so the proxy's own keeps no global privilege.
  configs_.push_back(replicationBackend(b));
  for (const auto& r : b.replicas) {
    ServerHealth replica;
    replica.backend = b.name;
    replica.name = r.name;
    replica.address = conf::formatHostPort(r.address);
    servers_.push_back(std::move(replica));
    alone_.push_back(false);
    configs_.push_back(replicationBackend(*serverLogin(b, r.name)));
  }
  for (size_t i = first; i < configs_.size(); ++i) {
    // A probe must not wait on a server longer than the probe may take.
    configs_[i].connect_timeout_ms = std::min(configs_[i].connect_timeout_ms, context_.config().ha.probe_timeout_ms);
    retired_.push_back(false);
  }
}

void ReplicaMonitor::addBackend(const conf::BackendConfig& backend) {
  const size_t first = servers_.size();
  appendBackend(backend);
  publish();
  for (size_t i = first; i < servers_.size(); ++i) asio::co_spawn(io_, watch(i), asio::detached);
  spdlog::info("ha: probing backend {} ({} server{}) added by a reload", backend.name, servers_.size() - first,
               servers_.size() - first == 1 ? "" : "s");
}

void ReplicaMonitor::retireBackend(const std::string& name) {
  for (size_t i = 0; i < servers_.size(); ++i) {
    if (servers_[i].backend == name) retired_[i] = true;
  }
  publish();
}

ReplicaMonitor::~ReplicaMonitor() { *alive_ = false; }

void ReplicaMonitor::start() {
  publish();
  for (size_t i = 0; i < servers_.size(); ++i) asio::co_spawn(io_, watch(i), asio::detached);
}

void ReplicaMonitor::stop() {
  asio::post(io_, [alive = alive_] { *alive = false; });
}

awaitable<void> ReplicaMonitor::watch(size_t index) {
  auto alive = alive_;
  const conf::HaConfig& ha = context_.config().ha;
  const auto interval = std::chrono::milliseconds(ha.check_interval_ms);
  const auto timeout = std::chrono::milliseconds(ha.probe_timeout_ms);
  asio::steady_timer pause(io_);
  std::unique_ptr<BackendConnection> conn;
  int64_t first_failure = 0;
  bool logged_failure = false;
  // A server without replicas has no role to watch, only whether it
  // answers: the plain query, which needs no privilege, and no SHOW SLAVE
  // STATUS (SLAVE MONITOR, which the backend's own account may lack).
  const bool alone = alone_[index];
  std::string_view role_query = alone ? kBasicRoleQuery : kRoleQuery;
  while (*alive && !retired_[index] && !context_.shutting_down.load()) {
    // Failures count from the start of the first failed probe: a hung
    // server's first probe takes ha.probe_timeout_ms to fail.
    const int64_t started = unixMillis();
    std::string error;
    bool refused = false;  // the server answered with an ERR: alive
    ProbeRows role;
    std::optional<SlaveStatus> slave;
    if (!conn) {
      auto opened = co_await BackendConnection::open(configs_[index], 0, context_.config().server.max_packet_bytes);
      if (!*alive) co_return;
      if (opened) {
        conn = std::move(*opened);
      } else {
        error = opened.error().message;
        refused = answeredButRefused(opened.error());
      }
    }
    if (conn) {
      asio::steady_timer deadline(io_);
      deadline.expires_after(timeout);
      auto answer = co_await (conn->queryRows(role_query) || deadline.async_wait(kNoThrow));
      if (!*alive) co_return;
      if (answer.index() == 0 && !std::get<0>(answer) &&
          std::get<0>(answer).error().kind == BackendError::Kind::kServer && role_query == kRoleQuery) {
        // No semi-sync variables on this server: ask without them from now on.
        role_query = kBasicRoleQuery;
        deadline.expires_after(timeout);
        answer = co_await (conn->queryRows(role_query) || deadline.async_wait(kNoThrow));
        if (!*alive) co_return;
      }
      if (answer.index() == 1) {
        error = fmt::format("no answer within ha.probe_timeout_ms ({} ms)", ha.probe_timeout_ms);
      } else if (!std::get<0>(answer)) {
        error = std::get<0>(answer).error().message;
        refused = std::get<0>(answer).error().kind == BackendError::Kind::kServer;
      } else if (role = std::move(*std::get<0>(answer)); !alone) {
        deadline.expires_after(timeout);
        auto status = co_await (conn->queryResult(kSlaveStatusQuery) || deadline.async_wait(kNoThrow));
        if (!*alive) co_return;
        if (status.index() == 1) {
          error = fmt::format("SHOW SLAVE STATUS: no answer within ha.probe_timeout_ms ({} ms)", ha.probe_timeout_ms);
        } else if (!std::get<0>(status)) {
          error = "SHOW SLAVE STATUS: " + std::get<0>(status).error().message;
          refused = std::get<0>(status).error().kind == BackendError::Kind::kServer;
        } else {
          slave = readSlaveStatus(std::get<0>(status)->columns, std::get<0>(status)->rows);
        }
      }
      if (!error.empty()) conn.reset();  // a timed-out exchange leaves the connection mid-response
    }
    if (retired_[index]) co_return;  // removed by a reload while probing
    ServerHealth& server = servers_[index];
    refreshRole(server);
    const ServerState before = server.state;
    const int64_t now = probeUnixMillis();
    if (error.empty()) {
      applyProbe(server, role, slave, ha, now);
      if (!server.primary && !server.read_only && conn) {
        const bool usable = co_await fenceIfWritable(index, *conn);
        if (!*alive) co_return;
        if (!usable) conn.reset();
      }
      first_failure = 0;
      if (logged_failure) spdlog::info("ha: server {} ({}) answers again", server.name, server.address);
      logged_failure = false;
    } else {
      if (first_failure == 0) first_failure = started;
      applyProbeFailure(server, error, ha, now, first_failure, refused);
      if (!logged_failure) {
        spdlog::warn("ha: server {} ({}) probe failed: {}", server.name, server.address, error);
        logged_failure = true;
      }
    }
    if (server.state != before && before != ServerState::kUnknown) {
      spdlog::warn("ha: server {} ({}) of backend {}: {} -> {}{}", server.name, server.address, server.backend,
                   serverStateName(before), serverStateName(server.state),
                   server.last_error.empty() ? "" : " (" + server.last_error + ")");
    }
    publish();
    if (hooks_.probed) hooks_.probed(servers_[index]);
    pause.expires_after(interval);
    co_await pause.async_wait(kNoThrow);
  }
}

void ReplicaMonitor::refreshRole(ServerHealth& server) const {
  auto topology = context_.topology.load();
  if (!topology) return;
  const GroupTopology* group = topology->find(server.backend);
  if (group == nullptr) return;
  server.primary = group->primary == server.name;
  server.fenced = std::find(group->fenced.begin(), group->fenced.end(), server.name) != group->fenced.end();
}

awaitable<bool> ReplicaMonitor::fenceIfWritable(size_t index, BackendConnection& conn) {
  auto alive = alive_;
  ServerHealth& server = servers_[index];
  if (hooks_.switching && hooks_.switching(server.backend)) co_return true;
  spdlog::warn("ha: server {} ({}) of backend {} is writable but is not its primary: setting read_only=ON "
               "(never two writers)", server.name, server.address, server.backend);
  asio::steady_timer deadline(io_);
  deadline.expires_after(std::chrono::milliseconds(context_.config().ha.probe_timeout_ms));
  auto done = co_await (conn.queryRows("SET GLOBAL read_only = 1") || deadline.async_wait(kNoThrow));
  if (!*alive) co_return false;
  if (done.index() == 0 && std::get<0>(done)) {
    server.read_only = true;
    co_return true;
  }
  server.last_error = "could not set read_only=ON: " +
                      (done.index() == 1 ? std::string("no answer within ha.probe_timeout_ms")
                                         : std::get<0>(done).error().message);
  spdlog::error("ha: server {} ({}): {}", server.name, server.address, server.last_error);
  co_return done.index() == 0 && std::get<0>(done).error().connectionUsable();
}

void ReplicaMonitor::publish() {
  for (auto& s : servers_) refreshRole(s);
  auto snapshot = std::make_shared<ReplicaHealth>();
  for (size_t i = 0; i < servers_.size(); ++i) {
    if (!retired_[i]) snapshot->servers.push_back(servers_[i]);
  }
  context_.replica_health.store(std::move(snapshot));
}

}  // namespace sp::proxy
