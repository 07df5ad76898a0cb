// SHOW [FULL] PROCESSLIST through the proxy (issue 30). Forwarded, it would
// list a backend's threads: a client could not find its own connection id
// there, and a GUI's "kill this process" would name an unrelated server
// thread. For application users the proxy lists its own sessions instead,
// as MariaDB lists connections to a user without the PROCESS privilege:
// that user's own sessions, on every worker, with the ids KILL takes.
// `privileged` users (DBA accounts) keep the servers' own list. Text,
// prepared (COM_STMT_PREPARE / EXECUTE) and COM_PROCESS_INFO alike.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

#include "conf/config.hpp"
#include "parser/local_queries.hpp"
#include "protocol/constants.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

namespace {

// MariaDB truncates Info to 100 characters unless FULL.
constexpr size_t kInfoWithoutFull = 100;

std::string_view commandName(uint8_t command) {
  using protocol::Command;
  switch (static_cast<Command>(command)) {
    case Command::kQuery: return "Query";
    case Command::kStmtPrepare: return "Prepare";
    case Command::kStmtExecute: return "Execute";
    case Command::kStmtFetch: return "Fetch";
    case Command::kStmtClose: return "Close stmt";
    case Command::kStmtReset: return "Reset stmt";
    case Command::kStmtSendLongData: return "Long Data";
    case Command::kInitDb: return "Init DB";
    case Command::kFieldList: return "Field List";
    case Command::kPing: return "Ping";
    case Command::kStatistics: return "Statistics";
    case Command::kProcessInfo: return "Processlist";
    case Command::kProcessKill: return "Kill";
    case Command::kChangeUser: return "Change user";
    case Command::kResetConnection: return "Reset connection";
    case Command::kSetOption: return "Set option";
    default: return "Query";
  }
}

awaitable<std::vector<ProcessRow>> rowsOn(Worker* worker, std::string user, bool full) {
  co_return worker->processRows(user, full);
}

// The result set, as MariaDB's SHOW PROCESSLIST. Not a coroutine on purpose:
// GCC 12 mishandles conditional temporaries inside coroutine frames.
LocalResult processResult(std::vector<ProcessRow> rows, bool full) {
  std::sort(rows.begin(), rows.end(), [](const ProcessRow& a, const ProcessRow& b) { return a.id < b.id; });
  namespace flag = protocol::column_flag;
  using protocol::ColumnType;
  LocalResult result;
  result.columns = {"Id", "User", "Host", "db", "Command", "Time", "State", "Info", "Progress"};
  result.definitions = {localNumberColumn(ColumnType::kLongLong, 21, flag::kNotNull),
                        localTextColumn(128),
                        localTextColumn(64),
                        localTextColumn(64, true),
                        localTextColumn(16),
                        localNumberColumn(ColumnType::kLong, 7, flag::kNotNull),
                        localTextColumn(30, true),
                        localTextColumn(full ? 65535 : kInfoWithoutFull, true),
                        localNumberColumn(ColumnType::kNewDecimal, 7, flag::kNotNull)};
  result.definitions[5].flags &= static_cast<uint16_t>(~flag::kUnsigned);  // Time is signed
  result.definitions[8].decimals = 3;
  for (auto& r : rows) {
    std::vector<std::optional<std::string>> row;
    row.reserve(9);
    row.emplace_back(std::to_string(r.id));
    row.emplace_back(std::move(r.user));
    row.emplace_back(std::move(r.host));
    if (r.db.empty()) row.emplace_back(std::nullopt);
    else row.emplace_back(std::move(r.db));
    row.emplace_back(std::move(r.command));
    row.emplace_back(std::to_string(r.seconds));
    row.emplace_back(std::string());  // State: the proxy does not track the server's stages
    if (r.has_info) row.emplace_back(std::move(r.info));
    else row.emplace_back(std::nullopt);
    row.emplace_back("0.000");
    result.rows.push_back(std::move(row));
  }
  return result;
}

}  // namespace

ProcessRow ClientSession::processRow(bool full) const {
  ProcessRow row;
  row.id = connection_id_;
  row.user = user_;
  row.host = peer_;
  row.db = desired_.database;
  const auto since = idle_ ? idleSince() : state_since_;
  row.seconds = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - since).count();
  if (idle_ || current_command_.empty()) {
    row.command = "Sleep";
    return row;
  }
  row.command = std::string(commandName(current_command_[0]));
  if (current_command_[0] == static_cast<uint8_t>(protocol::Command::kQuery)) {
    std::string_view sql(reinterpret_cast<const char*>(current_command_.data()) + 1, current_command_.size() - 1);
    if (!full && sql.size() > kInfoWithoutFull) sql = sql.substr(0, kInfoWithoutFull);
    row.info = std::string(sql);
    row.has_info = true;
  }
  return row;
}

std::vector<ProcessRow> Worker::processRows(std::string_view user, bool full) const {
  std::vector<ProcessRow> rows;
  for (const ClientSession* s : sessions_) {
    if (s->user().empty()) continue;  // not logged in yet: MariaDB shows it as unauthenticated, the proxy not at all
    if (!user.empty() && s->user() != user) continue;
    rows.push_back(s->processRow(full));
  }
  return rows;
}

bool ClientSession::usesLogicalProcesslist() const {
  const conf::UserAccount* account = worker_.context().config().findUser(user_);
  return account == nullptr || !account->privileged;
}

bool ClientSession::showsLogicalProcesslist(std::string_view sql, const parser::StatementInfo& info) const {
  if (info.kind != parser::StatementKind::kShow || info.multiple_statements) return false;
  if (!parser::processlistQuery(sql)) return false;
  return usesLogicalProcesslist();
}

awaitable<std::vector<ProcessRow>> ClientSession::visibleProcesses(bool full) {
  std::vector<ProcessRow> rows;
  for (Worker* w : worker_.context().workers) {
    std::vector<ProcessRow> part;
    if (w == &worker_) part = w->processRows(user_, full);
    else part = co_await asio::co_spawn(w->io(), rowsOn(w, user_, full), asio::use_awaitable);
    rows.insert(rows.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  co_return rows;
}

awaitable<LocalResult> ClientSession::processList(bool full) {
  std::vector<ProcessRow> rows = co_await visibleProcesses(full);
  co_return processResult(std::move(rows), full);
}

awaitable<bool> ClientSession::onShowProcesslist(bool full, bool binary_rows) {
  LocalResult result = co_await processList(full);
  co_return co_await sendLocalResult(result, binary_rows);
}

awaitable<bool> ClientSession::prepareProcesslist(std::string sql) {
  // As for SHOW WARNINGS: the prepare OK announces no columns (the execute's
  // result carries their definitions).
  const LocalResult announced;
  ClientStatement statement;
  statement.sql = std::move(sql);
  statement.local_processlist = true;
  co_return co_await prepareLocally(std::move(statement), announced);
}

}  // namespace sp::proxy
