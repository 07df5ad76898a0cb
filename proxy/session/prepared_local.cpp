// Statements the session carries out itself in the text protocol, prepared
// with COM_STMT_PREPARE (issue 30: one rule set for both protocols). A KILL
// names a proxy connection id; sent to a backend it would name a server
// thread, there possibly another client's backend connection, so a prepared
// KILL that reached the server could kill what its sender does not own. A
// SELECT CONNECTION_ID() answered by a backend would hand out such a thread
// id. Both are prepared on a backend for their metadata only (the server's
// own answer to the prepare, its errors and parameter count), and each
// execute is carried out here: the parameters are written into the text
// (inlineParameters, as the server would read them) and the text form runs
// through the same code as a COM_QUERY.
#include <fmt/format.h>

#include "parser/local_queries.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"
#include "routing/prepare_target.hpp"

namespace sp::proxy {

ClientStatement::Intercepted ClientSession::interceptedKind(std::string_view sql, const parser::StatementInfo& info,
                                                            std::string& connection_id_column) const {
  using K = parser::StatementKind;
  if (info.kind == K::kKill) return ClientStatement::Intercepted::kKill;
  if (info.calls_connection_id && info.kind == K::kSelect && !info.multiple_statements) {
    if (auto column = parser::connectionIdQuery(sql)) {
      connection_id_column = std::move(*column);
      return ClientStatement::Intercepted::kConnectionId;
    }
  }
  return ClientStatement::Intercepted::kNone;
}

awaitable<bool> ClientSession::executeIntercepted(const ClientStatement& stmt, const protocol::StmtExecute& exec) {
  if (stmt.intercepted == ClientStatement::Intercepted::kConnectionId) {
    co_return co_await sendConnectionId(stmt.connection_id_column, /*binary_rows=*/true);
  }
  auto text = inlineParameters(stmt.sql, exec, "is a KILL, which the proxy carries out itself,");
  if (!text) {
    queueError(reply_seq_, text.error());
    co_return co_await client_.flush();
  }
  parser::StatementInfo info = parser::classify(*text, dialect_);
  if (info.kind != parser::StatementKind::kKill) {
    // Bound values never change a statement's kind; refuse rather than forward.
    queueError(reply_seq_, client_error::make(client_error::kNotSupported,
        "shardproxy: this prepared KILL is no KILL with its parameters bound; run KILL as a text statement"));
    co_return co_await client_.flush();
  }
  co_return co_await onKill(info.kill);
}

std::optional<protocol::ErrPacket> ClientSession::killPrepareRefusal(std::string_view prepared_text) const {
  parser::StatementInfo inner = parser::classify(prepared_text, dialect_);
  if (setsTrackingVariable(inner)) {
    // EXECUTE would change the backend connection's own tracking, out of the
    // proxy's sight: the client's settings are the proxy's to keep.
    return client_error::make(client_error::kNotSupported,
        "shardproxy: a SET of session_track_* cannot be prepared with PREPARE ... FROM: send it as a statement of "
        "its own (or prepare it with COM_STMT_PREPARE)");
  }
  if (inner.kind != parser::StatementKind::kKill) return std::nullopt;
  // PREPARE ... FROM / EXECUTE run on the backend, where the id would name a
  // server thread: refused, as the server refuses statements it cannot prepare.
  return nestedKillError();
}

awaitable<std::optional<protocol::ErrPacket>> ClientSession::sqlPrepareRefusal(std::string_view sql) {
  if (auto text = routing::sqlPrepareText(sql, dialect_)) co_return killPrepareRefusal(*text);
  // PREPARE ... FROM @variable: the text lives in the user variable, which
  // pinned the session to one connection (usesConnectionBoundState): read it
  // there. Not pinned: the variable was never set on any connection this
  // session holds, and the server prepares NULL (an error of its own).
  auto variable = routing::sqlPrepareVariable(sql, dialect_);
  if (!variable || !pinned_) co_return std::nullopt;
  auto rows = co_await pinned_->queryRows("SELECT " + *variable);
  if (!rows) co_return std::nullopt;  // the statement's own run reports a lost or refusing backend
  if (rows->size() != 1 || rows->front().size() != 1 || !rows->front()[0]) co_return std::nullopt;
  co_return killPrepareRefusal(*rows->front()[0]);
}

}  // namespace sp::proxy
