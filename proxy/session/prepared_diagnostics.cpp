// A prepared diagnostics statement (SHOW WARNINGS / SHOW ERRORS / SHOW
// COUNT(*) ..., e.g. mysqltest --ps-protocol, drivers that prepare
// everything): answered from the session's own diagnostics area as the text
// form is (session_diagnostics.hpp), in the binary protocol. Prepared on a
// backend it would read the area of whichever pooled connection serves it.
// As MariaDB does, the prepare OK of SHOW WARNINGS / ERRORS announces no
// columns (their definitions come with each execute's result), that of SHOW
// COUNT(*) ... (a SELECT @@session.warning_count inside) its one column; the
// execute answers with binary rows.
#include "conf/config.hpp"
#include "parser/local_queries.hpp"
#include "protocol/constants.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

bool ClientSession::answersDiagnosticsLocally(std::string_view sql, const parser::StatementInfo& info) const {
  return info.reads_diagnostics && !info.multiple_statements && parser::diagnosticsQuery(sql).has_value();
}

awaitable<bool> ClientSession::prepareDiagnostics(std::string sql) {
  LocalResult announced;
  if (parser::diagnosticsQuery(sql)->count) announced = *diagnostics_.answer(sql);
  ClientStatement statement;
  statement.sql = std::move(sql);
  statement.num_columns = static_cast<uint16_t>(announced.columns.size());
  statement.local_diagnostics = true;
  co_return co_await prepareLocally(std::move(statement), announced);
}

awaitable<bool> ClientSession::prepareLocally(ClientStatement statement, const LocalResult& announced) {
  uint32_t id = 0;
  const uint32_t max_statements = worker_.context().config().limits.max_prepared_statements_per_session;
  if (!statements_.add(std::move(statement), id, max_statements)) {
    queueError(reply_seq_, client_error::tooManyStatements(max_statements));
    co_return co_await client_.flush();
  }
  protocol::Bytes out;
  appendLocalPrepareOk(out, announced, id, capabilities_, statusFlags(), reply_seq_, mariadb_capabilities_);
  client_.appendFramedBytes(out);
  co_return co_await client_.flush();
}

awaitable<bool> ClientSession::sendInvalidConditionOk() {
  // The server answers OK; the area now ends with Error 1758, the one
  // condition this statement raised (the OK's warning count).
  protocol::OkPacket ok;
  ok.status_flags = statusFlags();
  ok.warnings = 1;
  protocol::Bytes out;
  protocol::encode(ok, capabilities_, out);
  client_.append(out, reply_seq_);
  co_return co_await client_.flush();
}

awaitable<bool> ClientSession::executeDiagnostics(const ClientStatement& statement) {
  // Like the text form, reading the area leaves it as it is.
  auto result = diagnostics_.answer(statement.sql);
  protocol::Bytes out;
  appendLocalResult(out, *result, capabilities_, statusFlags(), reply_seq_, /*binary_rows=*/true,
                    mariadb_capabilities_);
  client_.appendFramedBytes(out);
  co_return co_await client_.flush();
}

}  // namespace sp::proxy
