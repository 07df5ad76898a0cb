// KILL [CONNECTION | QUERY] n and COM_PROCESS_KILL, carried out by the proxy.
//
// Clients kill with the connection id the proxy gave them in the handshake:
// the mariadb CLI on Ctrl-C, Connector/J on Statement.cancel() or a query
// timeout, PyMySQL's kill(). Forwarded, that id would name an unrelated
// backend thread, so the proxy finds the session itself (on whichever worker
// holds it) and sends KILL QUERY for the server threads running its statement,
// over connections of its own. The connections aimed at never go back to a
// pool, so a late KILL cannot hit another client's statement.
#include <charconv>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "protocol/text_commands.hpp"
#include "protocol/wire.hpp"
#include "proxy/exec/backend_kill.hpp"
#include "proxy/exec/kill_execution.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/net/local_result.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

namespace {

// Runs aimKill on `worker`'s thread, where its sessions and pools live.
awaitable<Worker::KillAim> aimOn(Worker* worker, uint32_t id, std::string user, bool query_only) {
  co_return worker->aimKill(id, user, query_only);
}

}  // namespace

awaitable<bool> ClientSession::onKill(const parser::KillRequest& asked) {
  parser::KillRequest request = asked;
  if (!request.variable.empty()) {
    // The variable lives on the pinned connection (setting one pins the
    // session); unpinned, it was never set here: NULL, which the server reads as 0.
    request.id = 0;
    if (pinned_) {
      auto rows = co_await pinned_->queryRows("SELECT CAST(" + request.variable + " AS UNSIGNED)");
      if (rows && rows->size() == 1 && rows->front().size() == 1 && rows->front()[0]) {
        const std::string& v = *rows->front()[0];
        std::from_chars(v.data(), v.data() + v.size(), request.id);
      }
    }
  }
  if (!request.unsupported.empty()) {
    queueError(reply_seq_, client_error::make(client_error::kNotSupported, fmt::format(
        "shardproxy: {} is not supported; KILL [CONNECTION | QUERY] <id> takes the id of a connection to "
        "the proxy (the thread id its handshake reported)", request.unsupported)));
    co_return co_await client_.flush();
  }
  if (request.id == connection_id_) {
    // As the server answers: killing your own query interrupts the KILL
    // itself; killing your own connection ends it.
    if (request.query_only) {
      queueError(reply_seq_, client_error::make(client_error::kQueryInterrupted, "Query execution was interrupted"));
      co_return co_await client_.flush();
    }
    queueError(reply_seq_, client_error::make(client_error::kConnectionKilled, "Connection was killed"));
    co_await client_.flush();
    co_return false;
  }
  Worker::KillAim aim;
  if (request.id <= UINT32_MAX) {
    for (Worker* w : worker_.context().workers) {
      aim = co_await asio::co_spawn(w->io(), aimOn(w, static_cast<uint32_t>(request.id), user_, request.query_only),
                                    asio::use_awaitable);
      if (aim.result != Worker::KillAim::Result::kNoSuchSession) break;
    }
  }
  using R = Worker::KillAim::Result;
  if (aim.result == R::kNoSuchSession) {
    queueError(reply_seq_, client_error::make(client_error::kNoSuchThread,
                                              fmt::format("Unknown thread id: {}", request.id)));
    co_return co_await client_.flush();
  }
  if (aim.result == R::kNotOwner) {
    queueError(reply_seq_, client_error::make(client_error::kKillDenied,
                                              fmt::format("You are not owner of thread {}", request.id)));
    co_return co_await client_.flush();
  }
  const KillOutcome outcome = co_await executeKill(aim.running, openKillChannel);
  const auto& failures = outcome.failures;
  spdlog::info("session {} ({}): KILL {} {}: {} backend quer{} interrupted{}", connection_id_, user_,
               request.query_only ? "QUERY" : "CONNECTION", request.id, outcome.interrupted,
               outcome.interrupted == 1 ? "y" : "ies",
               failures.empty() ? "" : fmt::format("; failed: {}", fmt::join(failures, "; ")));
  if (!failures.empty() && request.query_only) {
    queueError(reply_seq_, client_error::make(client_error::kGeneric, fmt::format(
        "shardproxy: KILL QUERY {} could not interrupt every backend: {}", request.id, fmt::join(failures, "; "))));
    co_return co_await client_.flush();
  }
  ++worker_.observer().metrics().kills;
  co_return co_await sendOk(reply_seq_);
}

awaitable<bool> ClientSession::sendConnectionId(const std::string& column, bool binary_rows) {
  LocalResult result;
  result.columns = {column};
  protocol::ColumnDefinition41 def;  // as MariaDB describes CONNECTION_ID(): INT UNSIGNED NOT NULL, length 10
  def.type = protocol::ColumnType::kLong;
  def.column_length = 10;
  def.character_set = 63;
  def.flags = protocol::column_flag::kNotNull | protocol::column_flag::kUnsigned | protocol::column_flag::kBinary;
  result.definitions = {def};
  result.rows = {{std::to_string(connection_id_)}};
  co_return co_await sendLocalResult(result, binary_rows);
}

awaitable<bool> ClientSession::onProcessKill(protocol::ByteView payload) {
  // Kills the connection.
  auto kill = protocol::decodeComProcessKill(payload);
  if (!kill) {
    queueError(reply_seq_, client_error::make(client_error::kMalformedPacket,
                                              "shardproxy: COM_PROCESS_KILL without a 4-byte connection id"));
    co_return co_await client_.flush();
  }
  parser::KillRequest request;
  request.id = kill->connection_id;
  co_return co_await onKill(request);
}

}  // namespace sp::proxy
