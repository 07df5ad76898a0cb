#include "proxy/admin/admin_session.hpp"

#include "conf/config.hpp"
#include "proxy/backend/schema_drift_check.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "protocol/constants.hpp"
#include "protocol/text_commands.hpp"
#include "protocol/generic_packets.hpp"
#include "proxy/admin/admin_results.hpp"
#include "proxy/admin/admin_server.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/net/login_deadline.hpp"
#include "proxy/ha/ha_command.hpp"
#include "proxy/ha/ha_coordinator.hpp"
#include "proxy/lifecycle/lifecycle_admin.hpp"
#include "proxy/move/move_coordinator.hpp"
#include "proxy/admin/background_command.hpp"
#include "proxy/admin/limit_command.hpp"
#include "proxy/fleet/fleet_agent.hpp"
#include "proxy/schema/schema_command.hpp"
#include "proxy/schema/schema_coordinator.hpp"
#include "proxy/session/server_handshake.hpp"
#include "proxy/net/tls_contexts.hpp"

namespace sp::proxy {

namespace {
constexpr size_t kMaxAdminPacket = 1u << 20;
constexpr uint16_t kStatus = protocol::status::kAutocommit;
}  // namespace

AdminSession::AdminSession(ProxyContext& context, ShardMapManager& maps, const AdminServer& server,
                           tcp::socket socket, uint32_t connection_id)
    : context_(context), maps_(maps), server_(server), client_(std::move(socket), kMaxAdminPacket),
      connection_id_(connection_id) {
  error_code ec;
  auto ep = client_.socket().remote_endpoint(ec);
  peer_ = ec ? std::string("unknown") : fmt::format("{}:{}", ep.address().to_string(), ep.port());
  loopback_ = !ec && ep.address().is_loopback();
}

void AdminSession::queueOk(uint8_t seq) {
  protocol::OkPacket ok;
  ok.status_flags = kStatus;
  protocol::Bytes out;
  protocol::encode(ok, capabilities_, out);
  client_.append(out, seq);
}

void AdminSession::queueError(uint8_t seq, uint16_t code, const char* sql_state, const std::string& message) {
  protocol::ErrPacket err{code, sql_state, message};
  protocol::Bytes out;
  protocol::encode(err, out);
  client_.append(out, seq);
}

awaitable<bool> AdminSession::login() {
  if (!loopback_ && !context_.config().server.admin_allow_remote) {
    // Refused before the handshake, as a server refuses a host it does not know.
    spdlog::warn("admin port: refused connection from non-loopback peer {} (server.admin_allow_remote is false)", peer_);
    queueError(0, 1130, "HY000", "Host '" + peer_ + "' is not allowed to connect to the shardproxy admin port");
    co_await client_.flush();
    co_return false;
  }
  // The admin port offers TLS with the application port's certificate.
  LoginRequest request{connection_id_, context_.server_version, &context_.config().admin_users, peer_,
                       context_.tls ? context_.tls->current() : nullptr};
  // The admin port reads only small packets before login, like the application port.
  const size_t max_message = client_.maxMessageBytes();
  client_.setMaxMessageBytes(std::min<size_t>(context_.config().server.max_handshake_packet_bytes, max_message));
  // And within the same deadline (a TLS handshake that stalls included).
  LoginDeadline deadline(client_, std::chrono::milliseconds(context_.config().server.handshake_timeout_ms));
  auto result = co_await acceptLogin(client_, request);
  client_.setMaxMessageBytes(max_message);
  if (!result) {
    if (result.error() == LoginFailure::kTlsFailed) context_.tls_handshake_failures.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("admin port: login refused from {}", peer_);
    co_return false;
  }
  capabilities_ = result->capabilities;
  mariadb_capabilities_ = result->mariadb_capabilities;
  user_ = result->account->name;
  queueOk(result->next_seq);
  spdlog::info("admin port: {} logged in from {}{}{}", user_, peer_, client_.isTls() ? " over " : "",
               client_.tlsDescription());
  co_return co_await client_.flush();
}

awaitable<void> AdminSession::queueQuery(std::string_view sql, uint8_t seq) {
  if (auto move = parseMoveCommand(sql)) {
    context_.admin_commands.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("admin {}@{}: {}", user_, peer_, sql.substr(0, 200));
    if (!*move) {
      queueReply(AdminError{1064, "42000", move->error()}, seq);
    } else if (!context_.moves) {
      queueReply(AdminError{1105, "HY000", "shardproxy admin: online moves are not running"}, seq);
    } else {
      queueReply(context_.moves->execute(**move, "admin:" + user_), seq);
    }
    co_return;
  }
  if (auto ha = parseHaCommand(sql)) {
    // Replication-group commands talk to the servers and may hold a backend's
    // statements for a moment: awaited, logged at info (warn for the change itself).
    context_.admin_commands.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("admin {}@{}: {}", user_, peer_, sql.substr(0, 200));
    if (!*ha) {
      queueReply(AdminError{1064, "42000", ha->error()}, seq);
    } else if (!context_.ha) {
      queueReply(AdminError{1105, "HY000", "shardproxy admin: the replication-group coordinator is not running"}, seq);
    } else {
      const HaCommand command = **ha;
      const std::string who = "admin:" + user_;
      AdminReply reply = co_await context_.ha->execute(command, who);
      if (std::holds_alternative<AdminError>(reply)) context_.admin_errors.fetch_add(1, std::memory_order_relaxed);
      queueReply(std::move(reply), seq);
    }
    co_return;
  }
  if (auto limit = parseLimitCommand(sql)) {
    context_.admin_commands.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("admin {}@{}: {}", user_, peer_, sql.substr(0, 200));
    if (!*limit) {
      queueReply(AdminError{1064, "42000", limit->error()}, seq);
    } else if (!context_.statement_limits) {
      queueReply(AdminError{1105, "HY000", "shardproxy admin: statement limits are not running"}, seq);
    } else {
      const auto& users = context_.config().users;
      const std::string& name = (*limit)->rule.user;
      const bool known = std::any_of(users.begin(), users.end(), [&](const auto& u) { return u.name == name; });
      LimitPublisher publish;
      if (context_.fleet != nullptr) {
        publish = [this](const conf::StatementLimitRule& rule) {
          return context_.fleet->publishLimit(rule, "admin:" + user_);
        };
      }
      AdminReply reply = runLimitCommand(*context_.statement_limits, **limit, known, publish);
      if ((*limit)->kind == LimitCommand::Kind::kSet && std::holds_alternative<AdminOk>(reply)) {
        spdlog::warn("admin {}@{}: statement limit set: {}", user_, peer_, sql.substr(0, 300));
      }
      queueReply(std::move(reply), seq);
    }
    co_return;
  }
  if (auto background = parseBackgroundCommand(sql)) {
    context_.admin_commands.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("admin {}@{}: {}", user_, peer_, sql.substr(0, 200));
    if (!*background) {
      queueReply(AdminError{1064, "42000", background->error()}, seq);
    } else if (!context_.background) {
      queueReply(AdminError{1105, "HY000", "shardproxy admin: background work is not running"}, seq);
    } else {
      if ((*background)->kind == BackgroundCommand::Kind::kSet) {
        spdlog::warn("admin {}@{}: background.{} set to {}", user_, peer_, (*background)->key, (*background)->value);
      }
      queueReply(runBackgroundCommand(*context_.background, **background), seq);
    }
    co_return;
  }
  if (auto schema = parseSchemaCommand(sql)) {
    // Schema changes run on the backends (a DDL waits for every table): awaited, logged at info.
    context_.admin_commands.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("admin {}@{}: {}", user_, peer_, sql.substr(0, 200));
    if (!*schema) {
      queueReply(AdminError{1064, "42000", schema->error()}, seq);
    } else if (!context_.schema) {
      queueReply(AdminError{1105, "HY000", "shardproxy admin: schema changes are not running"}, seq);
    } else {
      SchemaCommand command = **schema;
      std::string who = "admin:" + user_;
      AdminReply reply = co_await context_.schema->execute(std::move(command), std::move(who));
      if (std::holds_alternative<AdminError>(reply)) context_.admin_errors.fetch_add(1, std::memory_order_relaxed);
      queueReply(std::move(reply), seq);
    }
    co_return;
  }
  if (auto lifecycle = parseLifecycleCommand(sql)) {
    // Data-lifecycle commands talk to the backends: awaited, logged at info.
    context_.admin_commands.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("admin {}@{}: {}", user_, peer_, sql.substr(0, 200));
    if (*lifecycle) {
      queueReply(co_await executeLifecycleCommand(**lifecycle, context_, user_), seq);
    } else {
      queueReply(AdminError{1064, "42000", lifecycle->error()}, seq);
    }
    co_return;
  }
  auto command = parseAdminCommand(sql);
  context_.admin_commands.fetch_add(1, std::memory_order_relaxed);
  if (!command) {
    context_.admin_errors.fetch_add(1, std::memory_order_relaxed);
    queueError(seq, 1064, "42000", command.error());
    co_return;
  }
  // Commands that change something are logged at info, the rest at debug.
  bool changes = command->kind == AdminCommandKind::kReloadShardMap ||
                 command->kind == AdminCommandKind::kRollbackShardMap;
  spdlog::log(changes ? spdlog::level::info : spdlog::level::debug, "admin {}@{}: {}", user_, peer_,
              sql.substr(0, 200));
  if (command->kind == AdminCommandKind::kShowSchemaDrift) {
    co_await queueSchemaDrift(seq);  // reads the backends: awaited
    co_return;
  }
  AdminEnv env{context_, maps_, user_, peer_, connection_id_, server_.sessionCount()};
  queueReply(executeAdminCommand(*command, env), seq);
}

void AdminSession::queueReply(const AdminReply& reply, uint8_t seq) {
  if (auto* result = std::get_if<LocalResult>(&reply)) {
    protocol::Bytes out;
    appendLocalResult(out, *result, capabilities_, kStatus, seq, false, mariadb_capabilities_);
    client_.appendFramedBytes(out);
  } else if (auto* err = std::get_if<AdminError>(&reply)) {
    context_.admin_errors.fetch_add(1, std::memory_order_relaxed);
    queueError(seq, err->code, err->sql_state.c_str(), err->message);
  } else {
    queueOk(seq);
  }
}

awaitable<void> AdminSession::queueSchemaDrift(uint8_t seq) {
  LocalResult result;
  result.columns = {"table", "physical_table", "backend", "difference", "reference"};
  if (auto map = context_.shard_map.load()) {
    const conf::Config config = configWithCurrentPrimaries(context_);
    for (auto& r : co_await checkSchemaDrift(config, *map)) {
      result.rows.push_back({std::move(r.table), std::move(r.physical_table), std::move(r.backend),
                             std::move(r.difference), std::move(r.reference)});
    }
  }
  // The same encoding as every other answer: with the client's MariaDB
  // capabilities (the mariadb CLI asks for extended type info and read the
  // reply without it as malformed, 2027).
  queueReply(result, seq);
}

awaitable<bool> AdminSession::dispatch(protocol::ByteView payload, uint8_t seq) {
  using protocol::Command;
  if (payload.empty()) {
    queueError(seq, client_error::kMalformedPacket.number, client_error::kMalformedPacket.sql_state,
               "shardproxy admin: empty command packet");
    co_await client_.flush();
    co_return false;
  }
  switch (static_cast<Command>(payload[0])) {
    case Command::kQuit:
      co_return false;
    case Command::kQuery:
      co_await queueQuery(protocol::decodeComQuery(payload)->query, seq);  // the command byte was just read
      break;
    case Command::kPing:
    case Command::kInitDb:  // nothing to switch to: accepted so `mariadb -D x` and USE work
    case Command::kResetConnection:
      queueOk(seq);
      break;
    default:
      queueError(seq, client_error::kUnknownCommand.number, client_error::kUnknownCommand.sql_state,
                 "shardproxy admin: unknown command");
      break;
  }
  co_return co_await client_.flush();
}

awaitable<void> AdminSession::run() {
  if (co_await login()) {
    for (;;) {
      if (context_.shutting_down.load()) break;
      auto msg = co_await client_.read();
      const bool out_of_order = msg ? msg->first_sequence_id != 0 : msg.error() == StreamError::kOutOfOrder;
      if (out_of_order) {
        // As on the application port (and MariaDB): 1156 under the id expected, then close.
        queueError(msg ? 0 : client_.expectedSequenceId(), client_error::kPacketsOutOfOrder.number,
                   client_error::kPacketsOutOfOrder.sql_state, "Got packets out of order");
        co_await client_.flush();
      }
      if (!msg || out_of_order) break;
      auto seq = static_cast<uint8_t>(msg->sequence_id + 1);
      if (!co_await dispatch(msg->payload, seq)) break;
    }
  }
  client_.close();
}

}  // namespace sp::proxy
