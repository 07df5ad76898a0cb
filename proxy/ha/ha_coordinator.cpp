#include "proxy/ha/ha_coordinator.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "conf/config.hpp"
#include "proxy/backend/backend_connection.hpp"
#include "proxy/backend/binlog_stream.hpp"
#include "proxy/core/gtid.hpp"
#include "proxy/ha/replica_monitor.hpp"
#include "proxy/ha/replication_sql.hpp"
#include "proxy/ha/role_change_common.hpp"
#include "proxy/ha/topology_store.hpp"

namespace sp::proxy {

using namespace boost::asio::experimental::awaitable_operators;
using Clock = std::chrono::steady_clock;

namespace {

using role_change::kAborted;
using role_change::kDrainPoll;
using role_change::refused;

int64_t unixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// What is left of a role change's bound (at least 1 ms: a wait of 0 would not wait).
std::chrono::milliseconds leftUntil(Clock::time_point deadline) {
  return std::max<std::chrono::milliseconds>(
      std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

double millisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// One control connection to one server, with the replication account
// (REPLICATION SLAVE ADMIN, READ_ONLY ADMIN, SLAVE MONITOR, BINLOG MONITOR).
struct Control {
  std::string name;
  conf::BackendConfig login;
  std::unique_ptr<BackendConnection> conn;
};

// One statement with a deadline; the rows, or an error naming the server.
awaitable<std::expected<BackendConnection::TextRows, std::string>> sql(Control& c, std::string_view text,
                                                                        std::chrono::milliseconds timeout) {
  if (!c.conn) co_return std::unexpected(fmt::format("{}: not connected", c.name));
  asio::steady_timer deadline(co_await asio::this_coro::executor);
  deadline.expires_after(timeout);
  auto answer = co_await (c.conn->queryRows(text) || deadline.async_wait(kNoThrow));
  if (answer.index() == 1) {
    c.conn.reset();  // mid-response: unusable
    co_return std::unexpected(fmt::format("{}: no answer within {} ms to {}", c.name, timeout.count(), text));
  }
  if (!std::get<0>(answer)) {
    const auto& e = std::get<0>(answer).error();
    if (!e.connectionUsable()) c.conn.reset();
    co_return std::unexpected(e.kind == BackendError::Kind::kServer
                                  ? fmt::format("{}: error {} to {}: {}", c.name, e.code, text, e.message)
                                  : fmt::format("{}: {} ({})", c.name, e.message, text));
  }
  co_return std::move(*std::get<0>(answer));
}

awaitable<std::expected<std::string, std::string>> scalar(Control& c, std::string_view text,
                                                          std::chrono::milliseconds timeout) {
  auto rows = co_await sql(c, text, timeout);
  if (!rows) co_return std::unexpected(rows.error());
  if (rows->empty() || rows->front().empty()) co_return std::string();
  co_return rows->front()[0].value_or("");
}

awaitable<std::string> connect(Control& c, const ProxyContext& context) {
  conf::BackendConfig login = replicationBackend(c.login);
  login.connect_timeout_ms = std::min(login.connect_timeout_ms, context.config().ha.probe_timeout_ms);
  auto opened = co_await BackendConnection::open(login, 0, context.config().server.max_packet_bytes);
  if (!opened) co_return fmt::format("{} ({}): {}", c.name, conf::formatHostPort(c.login.address), opened.error().message);
  c.conn = std::move(*opened);
  co_return std::string();
}

// Makes `c` replicate from `primary` (GTID, `use_gtid` as changeMasterSql
// says) as the backend's replication account (replicationBackend: its
// replication_user, else its user): STOP SLAVE, CHANGE MASTER, START SLAVE.
// Empty, or the first step's error.
awaitable<std::string> follow(Control& c, const conf::BackendConfig& backend, const conf::HostPort& primary,
                              std::string_view use_gtid, std::chrono::milliseconds timeout) {
  const conf::BackendConfig account = replicationBackend(backend);
  const std::vector<std::string> steps{std::string(kStopReplication),
                                       changeMasterSql(primary, account.user, account.password, use_gtid),
                                       std::string(kStartReplication)};
  for (const std::string& step : steps) {
    auto done = co_await sql(c, step, timeout);
    if (!done) co_return done.error();
  }
  co_return std::string();
}

// follow() after the roles changed: clients no longer wait for it, so each
// statement gets the longer of the probe and switchover bounds (START SLAVE on
// a loaded server can take longer than a probe), and one retry on a fresh
// connection when the first attempt fails. Empty, or the last attempt's error.
awaitable<std::string> repoint(Control& c, const conf::BackendConfig& backend, const conf::HostPort& primary,
                               std::string_view use_gtid, const ProxyContext& context) {
  const auto& ha = context.config().ha;
  const auto timeout = std::chrono::milliseconds(std::max(ha.probe_timeout_ms, ha.switchover_timeout_ms));
  std::string error;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!c.conn) {
      if (auto e = co_await connect(c, context); !e.empty()) {
        error = e;
        continue;
      }
    }
    error = co_await follow(c, backend, primary, use_gtid, timeout);
    if (error.empty()) co_return error;
    spdlog::warn("ha: repointing {} (attempt {} of 2): {}", c.name, attempt + 1, error);
  }
  co_return error;
}

// kPromotable's answer: log_bin and log_slave_updates both on.
bool promotable(const std::expected<BackendConnection::TextRows, std::string>& rows) {
  return rows && !rows->empty() && rows->front().size() >= 2 && rows->front()[0].value_or("0") == "1" &&
         rows->front()[1].value_or("0") == "1";
}

// SHOW SLAVE STATUS by column name: Gtid_IO_Pos (what it received).
awaitable<std::expected<std::string, std::string>> receivedPosition(Control& c, std::chrono::milliseconds timeout) {
  if (!c.conn) co_return std::unexpected(c.name + ": not connected");
  asio::steady_timer deadline(co_await asio::this_coro::executor);
  deadline.expires_after(timeout);
  auto answer = co_await (c.conn->queryResult("SHOW SLAVE STATUS") || deadline.async_wait(kNoThrow));
  if (answer.index() == 1) {
    c.conn.reset();
    co_return std::unexpected(c.name + ": SHOW SLAVE STATUS did not answer in time");
  }
  if (!std::get<0>(answer)) co_return std::unexpected(c.name + ": " + std::get<0>(answer).error().message);
  const auto& result = *std::get<0>(answer);
  if (result.rows.empty()) co_return std::string();
  for (size_t i = 0; i < result.columns.size() && i < result.rows.front().size(); ++i) {
    if (result.columns[i].name == "Gtid_IO_Pos") co_return result.rows.front()[i].value_or("");
  }
  co_return std::string();
}

}  // namespace

HaCoordinator::HaCoordinator(ProxyContext& context) : context_(context) {}

HaCoordinator::~HaCoordinator() { stop(); }

void HaCoordinator::loadTopology() {
  std::vector<GroupTopology> saved;
  if (!context_.config().cache_path.empty()) {
    auto store = TopologyStore::open(context_.config().cache_path);
    if (!store) {
      spdlog::error("ha: the topology cache {} cannot be opened ({}): the configuration's roles apply and role "
                    "changes are not kept across restarts", context_.config().cache_path, store.error());
    } else {
      store_ = std::move(*store);
      auto rows = store_->load();
      if (rows) saved = std::move(*rows);
      else spdlog::error("ha: {}", rows.error());
    }
  }
  std::vector<std::string> warnings;
  auto topology = std::make_shared<Topology>(restoreTopology(context_.config(), saved, warnings));
  for (const auto& w : warnings) spdlog::warn("ha: {}", w);
  for (const auto& g : topology->groups) {
    if (g.changed_unix_ms != 0) {
      spdlog::info("ha: backend {}: primary {} (kept from {}), replicas [{}], fenced [{}]", g.backend, g.primary,
                   g.change, joinServerNames(g.replicas), joinServerNames(g.fenced));
    }
  }
  context_.topology.store(std::move(topology));
}

void HaCoordinator::start(std::vector<PoolHost*> hosts) {
  hosts_ = std::move(hosts);
  ReplicaMonitor::Hooks hooks;
  hooks.switching = [this](const std::string& backend) { return switching_.contains(backend); };
  hooks.probed = [this](const ServerHealth& server) { onProbe(server); };
  monitor_ = std::make_unique<ReplicaMonitor>(io_, context_, std::move(hooks));
  monitor_->start();
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this] { io_.run(); });
}

void HaCoordinator::stop() {
  if (monitor_) monitor_->stop();
  work_.reset();
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

awaitable<AdminReply> HaCoordinator::execute(HaCommand command, std::string who) {
  // (Arguments as lvalues: GCC 12 destroys temporaries passed to a coroutine twice.)
  co_return co_await asio::co_spawn(io_, run(command, who), asio::use_awaitable);
}

awaitable<AdminReply> HaCoordinator::run(HaCommand command, std::string who) {
  if (command.kind == HaCommandKind::kShowTopology) co_return showTopology();
  HaFleetLink* fleet = fleet_.load();
  if (context_.config().fleet && fleet == nullptr) co_return refused("the fleet agent has not started yet; retry");
  if (busy_) co_return refused("another SWITCHOVER / FAILOVER / REJOIN is running; one at a time");
  busy_ = true;
  AdminReply reply;
  if (fleet) reply = co_await runInFleet(*fleet, command, who);
  else reply = co_await runCommand(command, who);
  busy_ = false;
  co_return reply;
}

awaitable<AdminReply> HaCoordinator::runCommand(const HaCommand& command, const std::string& who) {
  switch (command.kind) {
    case HaCommandKind::kSwitchover: co_return co_await switchover(command.backend, command.server, who);
    case HaCommandKind::kFailover: co_return co_await failover(command.backend, command.server, who);
    case HaCommandKind::kRejoin: co_return co_await rejoin(command.backend, command.server, who);
    case HaCommandKind::kShowTopology: break;
  }
  co_return showTopology();
}

AdminReply HaCoordinator::showTopology() const {
  LocalResult result;
  result.columns = {"backend", "primary", "address", "replicas", "fenced", "version", "changed_at_unix_ms", "change"};
  auto topology = context_.topology.load();
  if (!topology) return result;
  for (const auto& g : topology->groups) {
    std::string address;
    if (auto primary = primaryPoolConfig(context_.config(), *topology, g.backend)) {
      address = conf::formatHostPort(primary->address);
    }
    result.rows.push_back({g.backend, g.primary, address, joinServerNames(g.replicas), joinServerNames(g.fenced),
                           std::to_string(topology->version), std::to_string(g.changed_unix_ms),
                           g.change.empty() ? "as configured" : g.change});
  }
  return result;
}

const conf::BackendConfig* HaCoordinator::groupOf(const std::string& backend, GroupTopology& group) const {
  const conf::BackendConfig* config = context_.config().findBackend(backend);
  auto topology = context_.topology.load();
  const GroupTopology* found = topology ? topology->find(backend) : nullptr;
  if (config == nullptr || found == nullptr) return nullptr;
  group = *found;
  return config;
}

bool HaCoordinator::holdAll(const std::string& backend, Clock::time_point until) {
  bool ok = true;
  for (auto* h : hosts_) ok = h->holdBackend(backend, until) && ok;
  return ok;
}

void HaCoordinator::releaseAll(const std::string& backend) {
  for (auto* h : hosts_) h->releaseBackend(backend);
}

std::optional<uint32_t> HaCoordinator::busyTotal(const std::string& backend) {
  uint32_t total = 0;
  for (auto* h : hosts_) {
    auto busy = h->busyConnections(backend);
    if (!busy) return std::nullopt;
    total += *busy;
  }
  return total;
}

std::string HaCoordinator::publish(GroupTopology group, bool primary_changed, bool sever) {
  auto current = context_.topology.load();
  auto next = std::make_shared<Topology>(current ? *current : topologyFromConfig(context_.config()));
  ++next->version;
  if (auto* g = next->find(group.backend)) *g = group;
  else next->groups.push_back(group);
  context_.topology.store(next);
  std::string problem;
  if (store_) problem = store_->save(group);
  auto primary = primaryPoolConfig(context_.config(), *next, group.backend);
  auto replicas = replicaLogins(context_.config(), *next, group.backend);
  uint32_t closed = 0;
  for (auto* h : hosts_) {
    auto n = h->repointBackend(group.backend, primary_changed && primary ? &*primary : nullptr, replicas, sever);
    if (n) closed += *n;
  }
  // New pools (a replica's) start unmarked: servers still down are marked again.
  for (const auto& mark : down_marks_.marked()) sendMark(mark);
  if (closed > 0) {
    spdlog::warn("ha: backend {}: {} sessions idle on a pinned connection to the old primary were closed (their "
                 "connection-bound state lived there)", group.backend, closed);
  }
  spdlog::warn("ha: backend {}: primary {}, replicas [{}], fenced [{}] ({})", group.backend, group.primary,
               joinServerNames(group.replicas), joinServerNames(group.fenced), group.change);
  return problem;
}

// ---- SWITCHOVER ----

awaitable<AdminReply> HaCoordinator::switchover(const std::string& backend, std::string target,
                                                const std::string& who) {
  const auto& ha = context_.config().ha;
  GroupTopology group;
  const conf::BackendConfig* config = groupOf(backend, group);
  if (config == nullptr) co_return refused("SWITCHOVER: unknown backend '" + backend + "'");
  auto health = context_.replica_health.load();
  if (!health) co_return refused("SWITCHOVER: backend " + backend + " lists no replicas");
  const ServerHealth* primary = health->find(group.primary);
  if (primary == nullptr || !primary->answered) {
    co_return refused(fmt::format("SWITCHOVER: the primary {} of backend {} does not answer its probes: use "
                                  "FAILOVER BACKEND {}", group.primary, backend, backend));
  }
  if (target.empty()) {
    // The replica that has applied the most, among those that qualify.
    for (const auto& name : group.replicas) {
      const ServerHealth* s = health->find(name);
      if (s == nullptr || !servesReads(*s)) continue;
      const ServerHealth* best = target.empty() ? nullptr : health->find(target);
      if (best == nullptr || !positionCoversAll(best->gtid_current_pos, s->gtid_current_pos)) target = name;
    }
    if (target.empty()) co_return refused("SWITCHOVER: backend " + backend + " has no replica that is up and current");
  }
  if (std::find(group.replicas.begin(), group.replicas.end(), target) == group.replicas.end()) {
    co_return refused(fmt::format("SWITCHOVER: '{}' is not a replica of backend {} (replicas: {})", target, backend,
                                  group.replicas.empty() ? "none" : joinServerNames(group.replicas)));
  }
  const ServerHealth* candidate = health->find(target);
  if (candidate == nullptr || !candidate->answered) {
    co_return refused(fmt::format("SWITCHOVER: replica {} does not answer its probes", target));
  }
  if (candidate->state != ServerState::kUp) {
    co_return refused(fmt::format("SWITCHOVER: replica {} is {} ({}); it must replicate and be within "
                                  "ha.max_replica_lag_ms ({} ms)", target, serverStateName(candidate->state),
                                  candidate->last_error.empty() ? "no error" : candidate->last_error,
                                  ha.max_replica_lag_ms));
  }
  if (!context_.write_hold.empty()) {
    co_return refused("SWITCHOVER: an online move is running (SHOW MOVES); switch after it has ended");
  }

  Control old_primary{group.primary, *serverLogin(*config, group.primary), nullptr};
  Control promoted{target, *serverLogin(*config, target), nullptr};
  std::vector<Control> others;
  for (const auto& name : group.replicas) {
    if (name != target) others.push_back(Control{name, *serverLogin(*config, name), nullptr});
  }
  const auto timeout = std::chrono::milliseconds(ha.probe_timeout_ms);
  for (Control* c : {&old_primary, &promoted}) {
    if (auto e = co_await connect(*c, context_); !e.empty()) co_return refused("SWITCHOVER: cannot connect to " + e);
  }
  auto logs = co_await sql(promoted, kPromotable, timeout);
  if (!logs) co_return refused("SWITCHOVER: " + logs.error());
  if (!promotable(logs)) {
    co_return refused(fmt::format("SWITCHOVER: {} needs log_bin=ON and log_slave_updates=ON to become the primary "
                                  "(its replicas follow its binary log)", target));
  }
  for (auto& c : others) {
    if (auto e = co_await connect(c, context_); !e.empty()) spdlog::warn("ha: switchover: {}", e);
  }

  // From here on, statements to the backend's primary wait.
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::milliseconds(ha.switchover_timeout_ms);
  auto remaining = [&] { return leftUntil(deadline); };
  switching_.insert(backend);
  holdAll(backend, deadline);
  bool made_read_only = false;
  auto abort = [&](std::string why) -> awaitable<AdminReply> {
    if (made_read_only) {
      auto undone = co_await sql(old_primary, kSetWritable, timeout);
      if (!undone) why += "; and read_only could not be turned off again on " + group.primary + ": " + undone.error();
    }
    switching_.erase(backend);
    releaseAll(backend);
    spdlog::error("ha: switchover of backend {} to {} abandoned after {:.0f} ms: {}", backend, target,
                  millisSince(started), why);
    co_return AdminError{kAborted, "HY000",
                         fmt::format("shardproxy admin: SWITCHOVER of backend {} to {} abandoned, nothing changed: {}",
                                     backend, target, why)};
  };

  // 1. Drain: no statement or transaction is running on the old primary.
  uint32_t busy = 0;
  for (;;) {
    auto b = busyTotal(backend);
    busy = b.value_or(1);
    if (busy == 0) break;
    if (Clock::now() + kDrainPoll >= deadline) {
      const std::string why = fmt::format("{} statements or transactions on {} were still running after "
                                          "ha.switchover_timeout_ms ({} ms)", busy, group.primary,
                                          ha.switchover_timeout_ms);
      co_return co_await abort(why);
    }
    asio::steady_timer pause(io_);
    pause.expires_after(kDrainPoll);
    co_await pause.async_wait(kNoThrow);
  }
  const double drained_ms = millisSince(started);

  // 2. The old primary takes no more writes; its last position.
  auto ro = co_await sql(old_primary, kSetReadOnly, remaining());
  if (!ro) co_return co_await abort(ro.error());
  made_read_only = true;
  auto final_position = co_await scalar(old_primary, kBinlogPosition, remaining());
  if (!final_position) co_return co_await abort(final_position.error());

  // 3. The replica applies everything up to it.
  const auto wait_ms = static_cast<uint32_t>(remaining().count());
  const std::string wait_sql = gtidWaitSql(*final_position, wait_ms);
  auto waited = co_await scalar(promoted, wait_sql, remaining() + timeout);
  if (!waited) co_return co_await abort(waited.error());
  if (*waited != "0") {
    const std::string why = fmt::format("{} had not applied {}'s last position {} within ha.switchover_timeout_ms",
                                        target, group.primary, *final_position);
    co_return co_await abort(why);
  }
  const double caught_up_ms = millisSince(started);

  // 4. Promote. Past this point the switch goes through.
  static constexpr std::string_view kPromote[] = {kStopReplication, kForgetSource, kSetWritable};
  for (std::string_view step : kPromote) {
    auto done = co_await sql(promoted, step, remaining() + timeout);
    if (!done) {
      if (step != kStopReplication) {
        // Half promoted: replication stopped. Put it back before undoing.
        co_await sql(promoted, kStartReplication, timeout);
      }
      co_return co_await abort(done.error());
    }
  }

  // 5. The new roles, then the pools follow, then the held statements go on.
  GroupTopology next = group;
  next.primary = target;
  next.replicas.clear();
  for (const auto& name : group.replicas) {
    if (name != target) next.replicas.push_back(name);
  }
  next.replicas.push_back(group.primary);
  next.changed_unix_ms = unixMillis();
  next.change = fmt::format("switchover {} -> {} ({})", group.primary, target, who);
  next.promoted_at = *final_position;
  const std::string stored = publish(next, true);
  switching_.erase(backend);
  releaseAll(backend);
  const double held_ms = millisSince(started);

  // 6. The old primary and the other replicas follow the new primary (after
  //    the release: clients do not wait for this).
  std::vector<std::string> problems;
  if (auto e = co_await repoint(old_primary, *config, promoted.login.address, "current_pos", context_); !e.empty()) {
    problems.push_back(e);
  }
  for (auto& c : others) {
    if (!c.conn) {
      problems.push_back(c.name + ": not reachable; repoint it with REJOIN BACKEND " + backend + " SERVER " + c.name);
    } else if (auto e = co_await repoint(c, *config, promoted.login.address, "slave_pos", context_); !e.empty()) {
      problems.push_back(e);
    }
  }
  if (!stored.empty()) problems.push_back(stored + " (the new roles hold until a restart)");
  for (const auto& p : problems) spdlog::warn("ha: switchover of backend {}: {}", backend, p);
  spdlog::warn("ha: switchover of backend {}: {} -> {} at {} ({}); statements held {:.1f} ms", backend, group.primary,
               target, *final_position, who, held_ms);

  LocalResult result;
  result.columns = {"backend", "old_primary", "new_primary", "position", "drained_ms", "caught_up_ms", "held_ms",
                    "problems"};
  std::string problem_text;
  for (const auto& p : problems) problem_text += (problem_text.empty() ? "" : "; ") + p;
  result.rows.push_back({backend, group.primary, target, *final_position, fmt::format("{:.1f}", drained_ms),
                         fmt::format("{:.1f}", caught_up_ms), fmt::format("{:.1f}", held_ms), problem_text});
  co_return result;
}

// ---- FAILOVER ----

awaitable<AdminReply> HaCoordinator::failover(const std::string& backend, std::string target, const std::string& who) {
  const auto& ha = context_.config().ha;
  GroupTopology group;
  const conf::BackendConfig* config = groupOf(backend, group);
  if (config == nullptr) co_return refused("FAILOVER: unknown backend '" + backend + "'");
  auto health = context_.replica_health.load();
  if (!health || group.replicas.empty()) co_return refused("FAILOVER: backend " + backend + " has no replicas");
  const ServerHealth* primary = health->find(group.primary);
  if (primary != nullptr && primary->state != ServerState::kDown) {
    co_return refused(fmt::format("FAILOVER: the primary {} of backend {} is {}, not down (its probes must fail for "
                                  "ha.failure_timeout_ms, {} ms); for a planned change use SWITCHOVER BACKEND {}",
                                  group.primary, backend, serverStateName(primary->state), ha.failure_timeout_ms,
                                  backend));
  }
  if (!target.empty() && std::find(group.replicas.begin(), group.replicas.end(), target) == group.replicas.end()) {
    co_return refused(fmt::format("FAILOVER: '{}' is not a replica of backend {} (replicas: {})", target, backend,
                                  joinServerNames(group.replicas)));
  }
  const auto timeout = std::chrono::milliseconds(ha.probe_timeout_ms);
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::milliseconds(ha.switchover_timeout_ms);
  auto remaining = [&] { return leftUntil(deadline); };
  // Every reachable replica and what it has received from the dead primary.
  std::vector<Control> replicas;
  std::vector<std::string> received;
  std::vector<std::string> unreachable;
  for (const auto& name : group.replicas) {
    Control c{name, *serverLogin(*config, name), nullptr};
    if (auto e = co_await connect(c, context_); !e.empty()) {
      unreachable.push_back(name);
      spdlog::warn("ha: failover: {}", e);
      continue;
    }
    auto io_pos = co_await receivedPosition(c, timeout);
    auto applied = co_await scalar(c, kCurrentPosition, timeout);
    if (!io_pos || !applied) {
      unreachable.push_back(name);
      continue;
    }
    // What it will have once its relay log is applied: the received
    // position, or the applied one when it received nothing more.
    received.push_back(io_pos->empty() || positionCoversAll(*applied, *io_pos) ? *applied : *io_pos);
    replicas.push_back(std::move(c));
  }
  if (replicas.empty()) co_return refused("FAILOVER: no replica of backend " + backend + " answers");
  size_t best = 0;
  for (size_t i = 1; i < replicas.size(); ++i) {
    if (!positionCoversAll(received[best], received[i])) best = i;
  }
  if (!target.empty()) {
    auto it = std::find_if(replicas.begin(), replicas.end(), [&](const Control& c) { return c.name == target; });
    if (it == replicas.end()) co_return refused("FAILOVER: replica " + target + " does not answer");
    const size_t chosen = static_cast<size_t>(it - replicas.begin());
    if (!positionCoversAll(received[chosen], received[best])) {
      co_return refused(fmt::format("FAILOVER: {} has received less ({}) than {} ({}); promoting it would lose "
                                    "those writes: name {} or leave TO out", target, received[chosen],
                                    replicas[best].name, received[best], replicas[best].name));
    }
    best = chosen;
  }
  Control& promoted = replicas[best];
  target = promoted.name;
  auto logs = co_await sql(promoted, kPromotable, timeout);
  if (!promotable(logs)) {
    co_return refused(fmt::format("FAILOVER: {} needs log_bin=ON and log_slave_updates=ON to become the primary",
                                  target));
  }

  switching_.insert(backend);
  holdAll(backend, deadline);
  auto give_up = [&](std::string why) -> AdminReply {
    switching_.erase(backend);
    releaseAll(backend);
    spdlog::error("ha: failover of backend {} to {} failed: {}", backend, target, why);
    return AdminError{kAborted, "HY000",
                      fmt::format("shardproxy admin: FAILOVER of backend {} to {} failed: {}", backend, target, why)};
  };
  // Apply what it received, then stop replicating and take writes.
  const std::string wait_sql = gtidWaitSql(received[best], static_cast<uint32_t>(remaining().count()));
  auto waited = co_await scalar(promoted, wait_sql, remaining() + timeout);
  if (!waited) co_return give_up(waited.error());
  if (*waited != "0") co_return give_up("its relay log was not applied within ha.switchover_timeout_ms");
  static constexpr std::string_view kPromote[] = {kStopReplication, kForgetSource, kSetWritable};
  for (std::string_view step : kPromote) {
    auto done = co_await sql(promoted, step, remaining() + timeout);
    if (!done) co_return give_up(done.error());
  }
  auto position = co_await scalar(promoted, kCurrentPosition, timeout);
  // What the old primary had when last seen, against what the new one has.
  std::string loss = primary ? failoverLossFromLastProbe(*primary) : "unknown";
  if (primary && position) {
    if (auto missing = positionShortfall(*position, primary->gtid_current_pos); missing && *missing > 0) {
      loss = fmt::format("{} transactions the old primary had at its last probe are missing ({}); {}", *missing,
                         primary->gtid_current_pos, loss);
    }
  }

  GroupTopology next = group;
  next.primary = target;
  next.replicas.clear();
  next.fenced.push_back(group.primary);
  for (auto& c : replicas) {
    if (c.name != target) next.replicas.push_back(c.name);
  }
  for (const auto& name : unreachable) next.fenced.push_back(name);
  next.changed_unix_ms = unixMillis();
  next.change = fmt::format("failover {} -> {} ({}); lost writes: {}", group.primary, target, who, loss);
  next.promoted_at = position.value_or("");
  // A statement still on its way to the old primary (hung, not dead) must
  // fail now: acknowledged later by the fenced server, it would be a write
  // the new primary never has.
  const std::string stored = publish(next, true, true);
  switching_.erase(backend);
  releaseAll(backend);
  const double held_ms = millisSince(started);

  std::vector<std::string> problems;
  for (auto& c : replicas) {
    if (c.name == target) continue;
    if (auto e = co_await repoint(c, *config, promoted.login.address, "slave_pos", context_); !e.empty()) {
      problems.push_back(e);
    }
  }
  for (const auto& name : unreachable) {
    problems.push_back(name + " did not answer: fenced; REJOIN BACKEND " + backend + " SERVER " + name);
  }
  if (!stored.empty()) problems.push_back(stored);
  for (const auto& p : problems) spdlog::warn("ha: failover of backend {}: {}", backend, p);
  spdlog::warn("ha: failover of backend {}: {} -> {} ({}); lost writes: {}", backend, group.primary, target, who, loss);
  LocalResult result;
  result.columns = {"backend", "old_primary", "new_primary", "position", "held_ms", "lost_writes", "problems"};
  std::string problem_text;
  for (const auto& p : problems) problem_text += (problem_text.empty() ? "" : "; ") + p;
  result.rows.push_back({backend, group.primary, target, position.value_or(""), fmt::format("{:.1f}", held_ms), loss,
                         problem_text});
  co_return result;
}

// ---- REJOIN ----

awaitable<AdminReply> HaCoordinator::rejoin(const std::string& backend, const std::string& server,
                                            const std::string& who) {
  GroupTopology group;
  const conf::BackendConfig* config = groupOf(backend, group);
  if (config == nullptr) co_return refused("REJOIN: unknown backend '" + backend + "'");
  if (server == group.primary) co_return refused("REJOIN: " + server + " is the primary of backend " + backend);
  if (!isServerOf(*config, server)) co_return refused("REJOIN: '" + server + "' is not a server of backend " + backend);
  const auto timeout = std::chrono::milliseconds(context_.config().ha.probe_timeout_ms);
  Control joining{server, *serverLogin(*config, server), nullptr};
  Control primary{group.primary, *serverLogin(*config, group.primary), nullptr};
  for (Control* c : {&joining, &primary}) {
    if (auto e = co_await connect(*c, context_); !e.empty()) co_return refused("REJOIN: cannot connect to " + e);
  }
  // Read-only first: whatever follows, it takes no writes.
  if (auto ro = co_await sql(joining, kSetReadOnly, timeout); !ro) co_return refused("REJOIN: " + ro.error());
  auto own = co_await scalar(joining, kCurrentPosition, timeout);
  auto theirs = co_await scalar(primary, kCurrentPosition, timeout);
  if (!own || !theirs) co_return refused("REJOIN: " + (!own ? own.error() : theirs.error()));
  const bool fenced = std::find(group.fenced.begin(), group.fenced.end(), server) != group.fenced.end();
  if (fenced && !group.promoted_at.empty()) {
    // Anything past the position the primary was promoted at was written on
    // the old side only (GTIDs compare by sequence number: the group's later
    // writes would hide it from the check below).
    if (auto beyond = positionShortfall(group.promoted_at, *own); !beyond || *beyond > 0) {
      co_return refused(fmt::format(
          "REJOIN: {} has {} transactions the primary {} lacks: its position {} goes beyond {}, where {} was promoted "
          "(writes the failover lost: never acknowledged with semi-sync AFTER_SYNC). It cannot replicate from {} as "
          "it is; rebuild it from a copy of {} (docs/operations.md, \"Rejoin\")",
          server, beyond ? std::to_string(*beyond) : "unknown", group.primary, *own, group.promoted_at, group.primary,
          group.primary, group.primary));
    }
  }
  if (auto missing = positionShortfall(*theirs, *own); !missing || *missing > 0) {
    co_return refused(fmt::format("REJOIN: {} has {} transactions the primary {} lacks ({} against {}): writes the "
                                  "failover lost, or writes made outside the proxy. It cannot replicate from {} as it "
                                  "is; rebuild it from a copy of {} (docs/operations.md, \"Rejoin\")",
                                  server, missing ? std::to_string(*missing) : "unknown", group.primary, *own, *theirs,
                                  group.primary, group.primary));
  }
  if (auto e = co_await follow(joining, *config, primary.login.address, "current_pos", timeout); !e.empty()) {
    co_return refused("REJOIN: " + e);
  }
  std::erase(group.fenced, server);
  if (std::find(group.replicas.begin(), group.replicas.end(), server) == group.replicas.end()) {
    group.replicas.push_back(server);
  }
  group.changed_unix_ms = unixMillis();
  group.change = fmt::format("rejoin {} as a replica of {} ({})", server, group.primary, who);
  if (auto stored = publish(group, false); !stored.empty()) spdlog::error("ha: {}", stored);
  co_return AdminOk{};
}

// ---- automatic failover ----

void HaCoordinator::sendMark(const DownMark& mark) {
  for (auto* h : hosts_) h->markServer(mark.address, mark.reason);
}

void HaCoordinator::onProbe(const ServerHealth& server) {
  const auto& ha = context_.config().ha;
  // First the pools: statements stuck on a server that stopped answering
  // fail now; a failover (below) then holds the new ones and repoints.
  if (auto mark = down_marks_.observe(server, ha)) {
    if (mark->reason.empty()) {
      spdlog::info("ha: server {} ({}) answers again: its pools lend again", server.name, server.address);
    } else {
      spdlog::warn("ha: server {} ({}) of backend {} is down ({}): its statements in flight are cut and new ones "
                   "refused with 9001", server.name, server.address, server.backend, mark->reason);
    }
    sendMark(*mark);
  }
  if (!ha.auto_failover || !server.primary || server.state != ServerState::kDown) return;
  if (busy_) return;
  if (GroupTopology group; groupOf(server.backend, group) == nullptr || group.replicas.empty()) {
    return;  // nothing to promote: the server's return ends the outage
  }
  // In a fleet only the proxy holding ha/leader decides (an election, not a race).
  HaFleetLink* fleet = fleet_.load();
  if (context_.config().fleet && (fleet == nullptr || !fleet->leads())) return;
  const int64_t now = unixMillis();
  auto& last = auto_attempted_[server.backend];
  // One attempt per failure_timeout_ms: a group with no replica to promote
  // is not hammered, and a failed attempt is retried.
  if (last != 0 && now - last < static_cast<int64_t>(ha.failure_timeout_ms)) return;
  last = now;
  spdlog::warn("ha: the primary {} of backend {} has not answered for ha.failure_timeout_ms ({} ms): failing over",
               server.name, server.backend, ha.failure_timeout_ms);
  HaCommand command;
  command.kind = HaCommandKind::kFailover;
  command.backend = server.backend;
  asio::co_spawn(io_, [this, command]() -> awaitable<void> {
    std::string who = "auto_failover";
    if (auto* f = fleet_.load()) who += " on " + f->proxyName();
    auto reply = co_await run(command, who);
    if (auto* e = std::get_if<AdminError>(&reply)) spdlog::error("ha: automatic failover: {}", e->message);
  }, asio::detached);
}

}  // namespace sp::proxy
