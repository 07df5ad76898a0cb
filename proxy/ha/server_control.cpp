#include "proxy/ha/server_control.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "conf/config.hpp"
#include "proxy/backend/binlog_stream.hpp"
#include "proxy/ha/replication_sql.hpp"

namespace sp::proxy::role_change {

using namespace boost::asio::experimental::awaitable_operators;
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

}  // namespace sp::proxy::role_change
