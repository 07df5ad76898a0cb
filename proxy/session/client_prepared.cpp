// The binary protocol (prepared statements) of a client session. Statements
// are proxy objects: PREPARE is answered from a representative shard (every
// shard has the same schema), each EXECUTE plans with the bound values like a
// query and runs the physical statement on the chosen backend, preparing it
// there lazily (proxy/backend/backend_statements.hpp).
#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "conf/config.hpp"
#include "protocol/binary_value.hpp"
#include "protocol/constants.hpp"
#include "protocol/prepared.hpp"
#include "protocol/response_tracker.hpp"
#include "protocol/sql_literal.hpp"
#include "parser/local_queries.hpp"
#include "parser/parse.hpp"
#include "parser/placeholders.hpp"
#include "proxy/backend/backend_pool.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/statement_limits.hpp"
#include "proxy/session/worker.hpp"
#include "routing/prepare_target.hpp"

namespace sp::proxy {

namespace status = protocol::status;
using protocol::ResponseEvent;

namespace {

routing::ParamValue toParamValue(const protocol::ParamDescription& d) {
  routing::ParamValue v;
  using In = protocol::ParamDescription::Kind;
  using Out = routing::ParamValue::Kind;
  switch (d.kind) {
    case In::kNull: v.kind = Out::kNull; break;
    case In::kSigned: v.kind = Out::kSigned; break;
    case In::kUnsigned: v.kind = Out::kUnsigned; break;
    case In::kDouble: v.kind = Out::kDouble; break;
    case In::kString: v.kind = Out::kString; break;
    case In::kDecimal: v.kind = Out::kDecimal; break;
  }
  v.i = d.i;
  v.u = d.u;
  v.d = d.d;
  v.s = d.s;
  return v;
}

protocol::ErrPacket malformed(std::string_view what) {
  return client_error::make(client_error::kMalformedPacket, fmt::format("shardproxy: malformed {} packet", what));
}

protocol::ErrPacket unknownStatement(uint32_t id, std::string_view command) {
  // ER_UNKNOWN_STMT_HANDLER, as the server answers for an unknown id.
  return protocol::ErrPacket{1243, "HY000",
                             fmt::format("Unknown prepared statement handler ({}) given to {}", id, command)};
}

// COM_STMT_SEND_LONG_DATA bytes over a limit were dropped. MariaDB reports a
// parameter longer than max_allowed_packet at execute with 1105 and this text.
protocol::ErrPacket longDataTooLarge(const conf::Config& config) {
  return client_error::make(client_error::kGeneric,
      fmt::format("Parameter of prepared statement which is set through mysql_send_long_data() is longer than "
                  "'max_allowed_packet' bytes (shardproxy: server.max_packet_bytes {} per parameter, "
                  "limits.max_long_data_bytes_per_session {})",
                  config.server.max_packet_bytes, config.limits.max_long_data_bytes_per_session));
}

// An execute consumes the statement's long data whatever its outcome, as on
// the server; values of the execute view it until then.
class LongDataConsumed {
 public:
  LongDataConsumed(ClientStatements& statements, uint32_t id) : statements_(statements), id_(id) {}
  LongDataConsumed(const LongDataConsumed&) = delete;
  LongDataConsumed& operator=(const LongDataConsumed&) = delete;
  ~LongDataConsumed() {
    if (ClientStatement* s = statements_.find(id_)) {
      statements_.clearLongData(*s);
      s->params.long_data.clear();
    }
  }

 private:
  ClientStatements& statements_;
  uint32_t id_;
};

// The charset named by a setting: its first word, unquoted ("'gbk'" -> gbk,
// "latin1 collate latin1_bin" -> latin1). SET NAMES / SET CHARACTER SET values
// are already unquoted by SessionState; character_set_client is kept as written.
std::string_view charsetWord(std::string_view v) {
  v = v.substr(0, v.find_first_of(" \t"));
  auto quote = [](char c) { return c == '\'' || c == '"' || c == '`'; };
  while (!v.empty() && quote(v.front())) v.remove_prefix(1);
  while (!v.empty() && quote(v.back())) v.remove_suffix(1);
  return v;
}

// The character set the client's strings are in: SET NAMES / SET CHARACTER SET
// and an explicit character_set_client; which was set last is not tracked, so
// any of them naming an unsafe set counts.
bool clientCharsetUnsafe(const SessionState& s) {
  if (protocol::quotingUnsafeCharset(charsetWord(s.names))) return true;
  if (protocol::quotingUnsafeCharset(charsetWord(s.character_set))) return true;
  auto it = s.variables.find("character_set_client");
  return it != s.variables.end() && protocol::quotingUnsafeCharset(charsetWord(it->second));
}

}  // namespace

// A prepared statement that spans shards runs as text: its parameters are
// written into the statement as the literals the server would type the same
// way (protocol/sql_literal.hpp), the text statement is planned and merged as
// a query, and the merged rows go back to the client as binary rows.
namespace {

// Placeholder numbers in the statement's LIMIT / OFFSET (top-level SELECT).
std::vector<uint32_t> limitPlaceholders(std::string_view sql) {
  std::vector<uint32_t> out;
  auto parsed = parser::parse(sql);
  if (!parsed || !parsed->select) return out;
  for (const parser::Expr* e : {parsed->select->limit.count.get(), parsed->select->limit.offset.get()}) {
    if (e && e->kind == parser::ExprKind::kLiteral && e->literal_kind == parser::LiteralKind::kPlaceholder) {
      out.push_back(e->placeholder_index);
    }
  }
  return out;
}

}  // namespace

std::expected<std::string, protocol::ErrPacket> ClientSession::inlineParameters(
    const std::string& sql, const protocol::StmtExecute& exec, std::string_view runs_as_text_because) const {
  auto refuse = [&](std::string why) {
    return std::unexpected(client_error::make(client_error::kNotSupported,
        fmt::format("shardproxy: this prepared statement {} and runs as text, but {}", runs_as_text_because, why)));
  };
  if (clientCharsetUnsafe(desired_)) {
    return refuse("its string parameters cannot be quoted safely in the client's character set; "
                  "use utf8mb4 or name one shard key value");
  }
  protocol::SqlLiteralOptions options;
  options.backslash_escapes = !txn_.noBackslashEscapes();
  std::vector<std::string> literals;
  literals.reserve(exec.values.size());
  for (size_t i = 0; i < exec.values.size(); ++i) {
    auto literal = protocol::sqlLiteral(exec.values[i], exec.types[i], options);
    if (!literal) return refuse("parameter " + std::to_string(i + 1) + " is " + literal.error());
    literals.push_back(std::move(*literal));
  }
  // LIMIT ? / OFFSET ? bound as DOUBLE (mysql2 binds every JavaScript number
  // so): the server takes an integral value as the row count; in SQL text a
  // LIMIT must be an integer literal.
  const bool any_floating = std::any_of(exec.values.begin(), exec.values.end(), [](const protocol::BinaryValue& v) {
    return std::holds_alternative<double>(v) || std::holds_alternative<float>(v);
  });
  for (uint32_t index : any_floating ? limitPlaceholders(sql) : std::vector<uint32_t>{}) {
    if (index >= exec.values.size()) continue;
    double v = 0;
    if (const auto* d = std::get_if<double>(&exec.values[index])) v = *d;
    else if (const auto* f = std::get_if<float>(&exec.values[index])) v = *f;
    else continue;
    if (v >= 0 && v < 9.2e18 && v == static_cast<double>(static_cast<uint64_t>(v))) {
      literals[index] = std::to_string(static_cast<uint64_t>(v));
    }
  }
  auto text = parser::substitutePlaceholders(sql, literals);
  if (!text) return refuse(text.error());
  return std::move(*text);
}

awaitable<bool> ClientSession::onStmtPrepare(protocol::ByteView payload) {
  auto request = protocol::decodeStmtPrepare(payload);
  if (!request) {
    queueError(reply_seq_, malformed("COM_STMT_PREPARE"));
    co_return co_await client_.flush();
  }
  std::string sql(request->query);
  if (auto refused = tokenBudgetRefusal(sql, worker_.context().config().limits, dialect_)) {
    queueError(reply_seq_, *refused);
    co_return co_await client_.flush();
  }
  if (auto refused = accessRefusal(sql)) {
    queueError(reply_seq_, *refused);
    co_return co_await client_.flush();
  }
  parser::StatementInfo info = parser::classify(sql, dialect_);
  if (answersDiagnosticsLocally(sql, info)) co_return co_await prepareDiagnostics(std::move(sql));
  if (showsLogicalProcesslist(sql, info)) co_return co_await prepareProcesslist(std::move(sql));
  if (setsReadsVariable(info)) co_return co_await prepareReadsSetting(std::move(sql), info);
  if (auto ddl = logicalDdl(sql, info)) {
    // Refused at the prepare as the text form is refused; else prepared here.
    if (!*ddl) {
      queueError(reply_seq_, client_error::make(client_error::kUnsupported, ddl->error()));
      co_return co_await client_.flush();
    }
    ClientStatement statement;
    statement.sql = std::move(sql);
    statement.schema_change = true;
    const LocalResult announced;  // DDL: no columns, no parameters
    co_return co_await prepareLocally(std::move(statement), announced);
  }
  // What the text path carries out itself (KILL, CONNECTION_ID()) is
  // prepared on a backend for its metadata only and run by the proxy.
  std::string connection_id_column;
  const ClientStatement::Intercepted intercepted = interceptedKind(sql, info, connection_id_column);
  // The logical catalog: prepared where its first part runs (its metadata
  // is the server's), executed as text (executeCatalogAsText).
  std::optional<routing::CatalogPlan> catalog = catalogPlan(sql, info);
  if (catalog && catalog->parts.empty()) catalog.reset();
  // information_schema.PROCESSLIST: prepared on the default backend as
  // written (the temporary table each execute reads has the same columns).
  const bool processlist_select = readsLogicalProcesslist(sql, info);
  if (processlist_select) {
    if (auto refused = processlistSelectRefusal(sql, info)) {
      queueError(reply_seq_, *refused);
      co_return co_await client_.flush();
    }
    catalog.reset();
  }
  auto map = mapSnapshot();
  routing::Plan plan;
  plan.kind = routing::PlanKind::kPassthrough;
  if (processlist_select) {
    plan.kind = routing::PlanKind::kRoute;
    plan.targets.push_back({worker_.context().config().default_backend, {}, {}, sql});
  } else if (catalog) {
    plan.kind = routing::PlanKind::kRoute;
    plan.targets.push_back({catalog->parts.front().backend, {}, {}, catalog->parts.front().sql});
  } else if (map) {
    routing::PlannerInput input{*map, worker_.context().config().default_backend};
    input.dialect = dialect_;
    input.names = nameScope();
    input.limits = parseLimits(worker_.context().config().limits);
    // Inside a transaction, on the transaction's backend when the table has a
    // shard there; elsewhere on a connection of its own (a prepare reads
    // metadata only: the transaction is not touched).
    plan = routing::planForPrepare(sql, input, pinned_pool_ ? pinned_pool_->name() : std::string_view{});
  }
  auto routed = resolve(plan, sql, info, /*metadata_only=*/true);
  if (auto* err = std::get_if<protocol::ErrPacket>(&routed)) {
    queueError(reply_seq_, *err);
    co_return co_await client_.flush();
  }
  auto& target = std::get<StatementTarget>(routed);
  BackendPool& pool = *target.pool;
  std::string physical = target.sql.empty() ? sql : target.sql;
  auto conn = co_await borrowFor(pool);
  if (!conn) co_return true;

  protocol::Bytes out;
  protocol::encode(protocol::StmtPrepare{physical}, out);
  conn->stream().append(out, 0);
  bool sent = co_await conn->stream().flush();
  protocol::ResponseTracker tracker(protocol::ResponseKind::kPrepare, conn->capabilities(), conn->mariadbCapabilities());
  const bool drop_eof = capabilities_ & protocol::cap::kDeprecateEof;
  uint8_t seq = reply_seq_;
  bool backend_failed = !sent;
  uint32_t client_id = 0;
  uint16_t prepare_warnings = 0;
  std::optional<protocol::ErrPacket> prepare_error;  // the server refused the prepare
  while (!backend_failed && !tracker.done()) {
    auto msg = co_await conn->stream().read();
    if (!msg) {
      backend_failed = true;
      break;
    }
    auto ev = tracker.onPacket(msg->payload);
    if (!ev) {
      backend_failed = true;
      break;
    }
    if (*ev == ResponseEvent::kPrepareOk) {
      const auto& ok = tracker.prepareOk();
      prepare_warnings = ok.warnings;
      // The statement stays cached on this connection for executes that land here.
      for (uint32_t evicted : conn->statements().insert(physical, {ok.statement_id, ok.num_params, ok.num_columns})) {
        out.clear();
        protocol::encode(protocol::StmtClose{evicted}, out);
        conn->stream().append(out, 0);
      }
      ClientStatement statement;
      statement.sql = sql;
      statement.params.num_params = ok.num_params;
      statement.num_columns = ok.num_columns;
      statement.logical_catalog = catalog.has_value();
      statement.logical_processlist_select = processlist_select;
      statement.intercepted = intercepted;
      statement.connection_id_column = connection_id_column;
      const uint32_t max_statements = worker_.context().config().limits.max_prepared_statements_per_session;
      if (!statements_.add(std::move(statement), client_id, max_statements)) {
        // Too many statements (limits.max_prepared_statements_per_session):
        // the server's own error (ER_MAX_PREPARED_STMT_COUNT_REACHED).
        queueError(seq, client_error::tooManyStatements(max_statements));
        backend_failed = false;
        while (!tracker.done()) {
          auto rest = co_await conn->stream().read();
          if (!rest || !tracker.onPacket(rest->payload)) {
            backend_failed = true;
            break;
          }
        }
        break;
      }
      protocol::StmtPrepareOk mine = ok;
      mine.statement_id = client_id;
      mine.metadata_follows.reset();
      out.clear();
      protocol::encode(mine, out);
      seq = client_.append(out, seq);
      continue;
    }
    if (drop_eof && (*ev == ResponseEvent::kParamsEof || *ev == ResponseEvent::kColumnsEof)) continue;
    if (*ev == ResponseEvent::kErr) {
      if (auto err = protocol::decodeErrPacket(msg->payload)) prepare_error = std::move(*err);
    }
    seq = client_.append(msg->payload, seq);
  }
  if (backend_failed) {
    conn->markBroken();
    if (client_id) statements_.erase(client_id);
    reportBackendFailure(pool, seq, true);
  } else if (prepare_error || (prepare_warnings > 0 && diagnostics_.onSuccess(prepare_warnings))) {
    // The prepare's own error or notes are the session's diagnostics area now
    // (SHOW WARNINGS / SHOW COUNT(*) ERRORS answer from it): read whole on the
    // connection that has them.
    if (prepare_error) diagnostics_.onError(*prepare_error);
    auto rows = co_await conn->queryRows("SHOW WARNINGS");
    if (rows && !rows->empty()) diagnostics_.setConditions(*rows);
  }
  giveBack(std::move(conn), pool, std::nullopt);
  co_return co_await client_.flush();
}

awaitable<bool> ClientSession::onStmtExecute(protocol::ByteView payload) {
  protocol::Reader reader(payload.subspan(1));
  auto statement_id = reader.u32();
  if (!statement_id) {
    queueError(reply_seq_, malformed("COM_STMT_EXECUTE"));
    co_return co_await client_.flush();
  }
  const uint32_t id = *statement_id;
  ClientStatement* stmt = statements_.find(id);
  if (!stmt) {
    queueError(reply_seq_, unknownStatement(id, "mysqld_stmt_execute"));
    co_return co_await client_.flush();
  }
  if (stmt->local_diagnostics) co_return co_await executeDiagnostics(*stmt);
  if (stmt->local_processlist) co_return co_await onShowProcesslist(*parser::processlistQuery(stmt->sql), true);
  if (auto n = parser::diagnosticsConditionNumber(stmt->sql); n && diagnostics_.takeInvalidConditionNumber(*n)) {
    // As in the text form (client_session.cpp): answered from the session's area.
    co_return co_await sendInvalidConditionOk();
  }
  if (stmt->reads_setting) co_return co_await executeReadsSetting(*stmt);
  if (stmt->schema_change) {
    if (auto ddl = logicalDdl(stmt->sql, parser::classify(stmt->sql, dialect_))) {
      co_return co_await runSchemaChange(std::move(*ddl));
    }
    // The map changed since the prepare: no longer a logical table's change.
    queueError(reply_seq_, client_error::make(client_error::kUnsupported,
        "shardproxy: this prepared statement no longer changes a logical table of the shard map in force; "
        "prepare it again"));
    co_return co_await client_.flush();
  }
  LongDataConsumed consumed(statements_, id);
  if (stmt->long_data_too_large) {
    queueError(reply_seq_, longDataTooLarge(worker_.context().config()));
    co_return co_await client_.flush();
  }
  auto exec = protocol::decodeStmtExecute(payload, stmt->params);
  if (!exec) {
    queueError(reply_seq_, malformed("COM_STMT_EXECUTE"));
    co_return co_await client_.flush();
  }
  if (exec->flags != 0) {
    queueError(reply_seq_, client_error::make(client_error::kNotSupported,
        "shardproxy: server-side cursors (COM_STMT_FETCH) are not supported; execute without a cursor type"));
    co_return co_await client_.flush();
  }
  protocol::rememberExecute(stmt->params, *exec);
  if (stmt->intercepted != ClientStatement::Intercepted::kNone) co_return co_await executeIntercepted(*stmt, *exec);
  // Long data was collected by the proxy: the planner and the text forms
  // (scatter, catalog) see it as the value; a routed execute forwards it as
  // COM_STMT_SEND_LONG_DATA (session_route.cpp).
  std::vector<uint16_t> long_params;
  for (size_t i = 0; i < exec->values.size(); ++i) {
    if (std::holds_alternative<protocol::LongDataValue>(exec->values[i])) {
      std::string_view data;
      if (i < stmt->long_data.size()) data = stmt->long_data[i];
      exec->values[i] = data;
      long_params.push_back(static_cast<uint16_t>(i));
    }
  }
  std::vector<routing::ParamValue> params;
  params.reserve(exec->values.size());
  for (size_t i = 0; i < exec->values.size(); ++i) {
    auto d = protocol::describeParam(exec->values[i], exec->types[i]);
    if (!d) {
      queueError(reply_seq_, malformed("COM_STMT_EXECUTE parameter"));
      co_return co_await client_.flush();
    }
    params.push_back(toParamValue(*d));
  }
  parser::StatementInfo info = parser::classify(stmt->sql, dialect_);
  // A global transaction first: one a branch loss ended is rolled back before the lost answer.
  if (auto answered = co_await onGlobalStatement(info, stmt->sql)) co_return *answered;
  if (auto answered = co_await answerWhileLost(info.kind, info.multiple_statements)) co_return *answered;
  if (stmt->logical_processlist_select) co_return co_await runProcesslistSelect(stmt->sql, info, &*exec);
  if (stmt->logical_catalog) co_return co_await executeCatalogAsText(*stmt, *exec);
  std::variant<routing::Plan, protocol::ErrPacket> planned = planFor(stmt->sql, info, params, {});
  if (writeMayBeHeld(info, std::get<routing::Plan>(planned))) {
    planned = co_await planWrite(stmt->sql, info, params, {}, true, std::move(std::get<routing::Plan>(planned)));
  }
  if (auto* err = std::get_if<protocol::ErrPacket>(&planned)) {
    queueError(reply_seq_, *err);
    co_return co_await client_.flush();
  }
  routing::Plan& plan = std::get<routing::Plan>(planned);
  // Spanning shards, a split INSERT, or refused only because bound values sit
  // where the scatter planner needs literals (IN lists, LIMIT, HAVING): run as text.
  bool maybe_scatter = plan.kind == routing::PlanKind::kScatter || plan.kind == routing::PlanKind::kMultiWrite;
  if (plan.kind == routing::PlanKind::kRefused && plan.refusal) {
    auto code = plan.refusal->code;
    maybe_scatter = code == routing::RouteErrorCode::kMultiShard || code == routing::RouteErrorCode::kUnsupported;
  }
  if (maybe_scatter) co_return co_await executeScatterAsText(stmt->sql, info, *exec, plan);
  auto routed = resolve(plan, stmt->sql, info);
  if (auto* err = std::get_if<protocol::ErrPacket>(&routed)) {
    queueError(reply_seq_, *err);
    co_return co_await client_.flush();
  }
  auto& target = std::get<StatementTarget>(routed);
  Outbound out;
  out.execute_sql = target.sql.empty() ? stmt->sql : target.sql;
  out.execute = &*exec;
  setKeyTargets(out, plan, info);
  out.long_params = std::move(long_params);
  out.long_data = &stmt->long_data;
  BackendPool* pool = co_await readPool(*target.pool, info, stmt->sql, {});
  bool keep_going = co_await runOn(*pool, out, info);
  co_return keep_going;
}

awaitable<bool> ClientSession::executeScatterAsText(const std::string& sql, const parser::StatementInfo& info,
                                                    const protocol::StmtExecute& exec,
                                                    const routing::Plan& bound_plan) {
  const bool bound_refused = bound_plan.kind == routing::PlanKind::kRefused;
  auto text = inlineParameters(sql, exec);
  if (!text) {
    // A statement refused for its own shape keeps that refusal; one that
    // spans shards is told why its parameters cannot be inlined.
    auto err = text.error();
    if (bound_refused) {
      auto routed = resolve(bound_plan, sql, info);
      if (auto* refusal = std::get_if<protocol::ErrPacket>(&routed)) err = *refusal;
    }
    queueError(reply_seq_, err);
    co_return co_await client_.flush();
  }
  parser::StatementInfo text_info = parser::classify(*text, dialect_);
  auto planned = co_await planWrite(*text, text_info, {});
  if (auto* err = std::get_if<protocol::ErrPacket>(&planned)) {
    queueError(reply_seq_, *err);
    co_return co_await client_.flush();
  }
  routing::Plan& plan = std::get<routing::Plan>(planned);
  if (plan.kind == routing::PlanKind::kScatter && plan.scatter) co_return co_await runScatter(*plan.scatter, text_info, true, *text);
  // A split INSERT answers with one OK, the same in both protocols.
  if (plan.kind == routing::PlanKind::kMultiWrite) co_return co_await runMultiWrite(plan, text_info);
  // Not a scatter as text either: the text form's refusal (it names the
  // statement's real problem), or else the bound form's.
  std::variant<StatementTarget, protocol::ErrPacket> routed;
  if (plan.kind == routing::PlanKind::kRefused) {
    routed = resolve(plan, *text, text_info);
  } else if (bound_refused) {
    routed = resolve(bound_plan, sql, info);
  }
  if (auto* err = std::get_if<protocol::ErrPacket>(&routed)) {
    queueError(reply_seq_, *err);
    co_return co_await client_.flush();
  }
  spdlog::error("prepared statement planned as scatter but its text form did not: {}", text->substr(0, 200));
  queueError(reply_seq_, client_error::make(client_error::kNotSupported,
      "shardproxy: internal error: the prepared statement's text form plans differently; run it as a text query"));
  co_return co_await client_.flush();
}

awaitable<bool> ClientSession::executeCatalogAsText(const ClientStatement& stmt, const protocol::StmtExecute& exec) {
  auto text = inlineParameters(stmt.sql, exec, "reads the logical catalog");
  if (!text) {
    queueError(reply_seq_, text.error());
    co_return co_await client_.flush();
  }
  parser::StatementInfo text_info = parser::classify(*text, dialect_);
  if (auto catalog = catalogPlan(*text, text_info); catalog && !catalog->parts.empty()) {
    co_return co_await runCatalog(*catalog, /*binary_rows=*/true);
  }
  // The bound values made it something else (cannot happen for the shapes
  // the catalog plans today: values never change a statement's kind).
  queueError(reply_seq_, client_error::make(client_error::kNotSupported,
      "shardproxy: this prepared catalog statement is no catalog statement with its parameters bound; "
      "run it as a text query"));
  co_return co_await client_.flush();
}

void ClientSession::onStmtSendLongData(protocol::ByteView payload) {
  // No response, even on error (the server reports it at execute).
  auto m = protocol::decodeStmtSendLongData(payload);
  if (!m) return;
  ClientStatement* stmt = statements_.find(m->statement_id);
  if (!stmt || !stmt->params.noteLongData(m->param_id)) return;
  const auto& config = worker_.context().config();
  statements_.appendLongData(*stmt, m->param_id, m->data, config.server.max_packet_bytes,
                             config.limits.max_long_data_bytes_per_session);
}

awaitable<bool> ClientSession::onStmtReset(protocol::ByteView payload) {
  auto m = protocol::decodeStmtReset(payload);
  if (!m) {
    queueError(reply_seq_, malformed("COM_STMT_RESET"));
    co_return co_await client_.flush();
  }
  ClientStatement* stmt = statements_.find(m->statement_id);
  if (!stmt) {
    queueError(reply_seq_, unknownStatement(m->statement_id, "mysqld_stmt_reset"));
    co_return co_await client_.flush();
  }
  statements_.clearLongData(*stmt);
  stmt->params.long_data.clear();
  co_return co_await sendOk(reply_seq_);
}

void ClientSession::onStmtClose(protocol::ByteView payload) {
  // No response. Backend statements stay in their connections' bounded caches.
  if (auto m = protocol::decodeStmtClose(payload)) statements_.erase(m->statement_id);
}

}  // namespace sp::proxy
