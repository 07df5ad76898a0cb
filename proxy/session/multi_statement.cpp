// A COM_QUERY holding several statements (CLIENT_MULTI_STATEMENTS,
// docs/routing.md "Multi-statement packets"). Every statement is planned on
// its own text (parser::splitStatements), never only the first:
//
// - When no statement changes how the rest is read (sql_mode, character
//   set, current database) and every statement goes to the same
//   backend, the packet is sent whole, each routed statement replaced by its
//   physical form: the server answers with its own results and flags.
// - Otherwise the statements run one at a time, each split, classified and
//   planned under the dialect the previous ones left (as the server parses
//   the rest of a packet after running its first statement), each response
//   ending with SERVER_MORE_RESULTS_EXIST except the last; an ERR stops the
//   packet, as on the server.
//
// A statement the proxy refuses, or one that would need a form a packet
// cannot carry (spanning shards, KILL, local answers), gets an ERR naming
// the statement; when all statements are planned up front the refusal comes
// before anything runs.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "parser/split.hpp"
#include "protocol/constants.hpp"
#include "protocol/text_commands.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "routing/prepare_target.hpp"

namespace sp::proxy {

struct ClientSession::PacketStatement {
  size_t index = 0;          // 0-based position in the packet
  std::string_view text;     // the statement's own text
  parser::StatementInfo info;
  StatementTarget target;    // filled by planPacketStatement
};

namespace {

// Statements after which the server reads the rest of the packet
// differently: a new sql_mode or character set changes lexing, a new
// current database changes what unqualified table names mean.
bool changesReading(const parser::StatementInfo& info) {
  using K = parser::SessionSetting::Kind;
  if (info.kind == parser::StatementKind::kUse) return true;
  if (info.kind != parser::StatementKind::kSet) return false;
  for (const auto& s : info.settings) {
    if (s.kind == K::kSystemVariable || s.kind == K::kNames || s.kind == K::kCharacterSet) return true;
  }
  return false;
}

// "statement 2 of the multi-statement packet (SELECT ... FROM msg W...)"
std::string describe(size_t index, std::string_view text) {
  constexpr size_t kShown = 60;
  std::string shown(text.substr(0, kShown));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return fmt::format("statement {} of the multi-statement packet ({}{})", index + 1, shown,
                     text.size() > kShown ? "..." : "");
}

protocol::ErrPacket named(protocol::ErrPacket err, size_t index, std::string_view text) {
  err.message = describe(index, text) + ": " + err.message;
  return err;
}

}  // namespace

awaitable<std::optional<protocol::ErrPacket>> ClientSession::planPacketStatement(PacketStatement& st) {
  using K = parser::StatementKind;
  if (auto refused = accessRefusal(st.text)) co_return named(*refused, st.index, st.text);
  // Answered by the proxy itself when alone in a packet: not in one.
  if (st.info.kind == K::kKill || st.info.calls_connection_id || st.info.reads_diagnostics) {
    co_return named(client_error::make(client_error::kNotSupported,
                                    "shardproxy: KILL, CONNECTION_ID() and diagnostics statements are answered by "
                                    "the proxy and must be sent on their own, not in a multi-statement packet"),
                 st.index, st.text);
  }
  if (st.info.kind == K::kPrepareSql) {
    if (auto refused = co_await sqlPrepareRefusal(st.text)) co_return named(*refused, st.index, st.text);
  }
  // A write to keys an online move holds waits for its cut-over here too.
  auto planned = co_await planWrite(st.text, st.info, {}, {}, false);
  if (auto* err = std::get_if<protocol::ErrPacket>(&planned)) co_return named(*err, st.index, st.text);
  routing::Plan& plan = std::get<routing::Plan>(planned);
  if (plan.kind == routing::PlanKind::kScatter || plan.kind == routing::PlanKind::kMultiRoute ||
      plan.kind == routing::PlanKind::kMultiWrite) {
    co_return named(client_error::make(client_error::kNotSupported,
                                    "shardproxy: this statement spans several shards, which the proxy runs only "
                                    "when it is sent on its own, not in a multi-statement packet"),
                 st.index, st.text);
  }
  auto resolved = resolve(plan, st.text, st.info);
  if (auto* err = std::get_if<protocol::ErrPacket>(&resolved)) co_return named(*err, st.index, st.text);
  st.target = std::move(std::get<StatementTarget>(resolved));
  co_return std::nullopt;
}

awaitable<bool> ClientSession::onMultiStatement(protocol::ByteView payload, std::string_view sql) {
  const auto spans = parser::splitStatements(sql, dialect_);
  std::vector<PacketStatement> statements;
  statements.reserve(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    PacketStatement st{i, spans[i].text(sql), {}, {}};
    st.info = parser::classify(st.text, dialect_);
    if (changesReading(st.info)) co_return co_await runStatementByStatement(sql);
    // PREPARE ... FROM @variable is checked against the variable's value
    // (sqlPrepareRefusal), which statements before it in the packet may set:
    // one at a time, each planned after the ones before it ran.
    if (st.info.kind == parser::StatementKind::kPrepareSql && routing::sqlPrepareVariable(st.text, dialect_)) {
      co_return co_await runStatementByStatement(sql);
    }
    if (auto refused = co_await planPacketStatement(st)) {
      queueError(reply_seq_, *refused);
      co_return co_await client_.flush();
    }
    if (!statements.empty() && statements.front().target.pool != st.target.pool) {
      co_return co_await runStatementByStatement(sql);
    }
    statements.push_back(std::move(st));
  }
  if (statements.empty()) co_return co_await runStatementByStatement(sql);
  // One place: the packet as the client sent it, each routed statement in its physical form.
  std::string text;
  text.reserve(sql.size() + 64);
  size_t copied = 0;
  for (size_t i = 0; i < statements.size(); ++i) {
    const auto& st = statements[i];
    text.append(sql.substr(copied, spans[i].begin - copied));
    text.append(st.target.sql.empty() ? st.text : std::string_view(st.target.sql));
    copied = spans[i].end;
  }
  text.append(sql.substr(copied));
  protocol::Bytes rewritten;
  protocol::encode(protocol::ComQuery{text}, rewritten);
  Outbound out;
  out.payload = rewritten;
  const parser::StatementInfo whole = parser::classify(sql, dialect_);
  co_return co_await runOn(*statements.front().target.pool, out, whole);
}

awaitable<bool> ClientSession::runStatementByStatement(std::string_view sql) {
  size_t offset = 0;
  for (size_t index = 0;; ++index) {
    // The rest of the packet, read under the dialect the statements before left.
    const std::string_view rest = sql.substr(offset);
    const auto spans = parser::splitStatements(rest, dialect_);
    if (spans.empty()) {
      // Only comments or nothing at all: the server answers an empty query with an error.
      if (index == 0) {
        queueError(reply_seq_, protocol::ErrPacket{1065, "42000", "Query was empty"});
        co_return co_await client_.flush();
      }
      co_return true;
    }
    const bool last = spans.size() == 1;
    PacketStatement st{index, spans.front().text(rest), {}, {}};
    st.info = parser::classify(st.text, dialect_);
    offset += spans.front().end;
    const uint16_t more = last ? 0 : protocol::status::kMoreResultsExist;
    if (st.info.kind == parser::StatementKind::kBegin && !pinned_ && !st.info.consistent_snapshot &&
        !txn_.pendingBegin()) {
      // As a BEGIN sent alone: it goes with the transaction's first statement.
      diagnostics_.onSuccess(0);
      txn_.deferBegin(std::string(st.text));
      transaction_map_.reset();
      mapSnapshot();
      if (!co_await sendOk(reply_seq_, more)) co_return false;
      reply_seq_ = static_cast<uint8_t>(reply_seq_ + 1);
      if (last) co_return true;
      continue;
    }
    if (auto refused = co_await planPacketStatement(st)) {
      queueError(reply_seq_, *refused);
      co_return co_await client_.flush();
    }
    protocol::Bytes command;
    protocol::encode(protocol::ComQuery{st.target.sql.empty() ? st.text : std::string_view(st.target.sql)}, command);
    Outbound out;
    out.payload = command;
    out.more_results = !last;
    if (!co_await runOn(*st.target.pool, out, st.info)) co_return false;
    if (last || last_run_.stopped) co_return true;
    reply_seq_ = last_run_.next_seq;
  }
}

}  // namespace sp::proxy
