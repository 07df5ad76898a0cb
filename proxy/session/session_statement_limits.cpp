// statement_limits: per user and per digest (proxy/core/statement_limit_table.hpp),
// checked before each COM_QUERY and COM_STMT_EXECUTE: the same rule for both
// protocols; a prepared statement's digest is that of its prepared text.
#include "proxy/session/client_session.hpp"

#include "protocol/text_commands.hpp"
#include "protocol/wire.hpp"
#include "routing/plan_cache.hpp"

namespace sp::proxy {

std::optional<StatementLimits::Ticket> ClientSession::admitStatement(protocol::ByteView payload) {
  StatementLimits* limits = worker_.context().statement_limits;
  if (limits == nullptr || limits->empty()) return StatementLimits::Ticket{};
  std::string digest;
  if (limits->hasDigestRules()) {
    std::string_view sql;
    if (static_cast<protocol::Command>(payload[0]) == protocol::Command::kQuery) {
      if (auto query = protocol::decodeComQuery(payload)) sql = query->query;
    } else {
      protocol::Reader reader(payload.subspan(1));
      if (auto id = reader.u32()) {
        if (const ClientStatement* stmt = statements_.find(*id)) sql = stmt->sql;
      }
    }
    if (!sql.empty()) digest = routing::normalizeQuery(sql, {}).text;
  }
  auto outcome = limits->admit(user_, digest, std::chrono::steady_clock::now());
  if (auto* refusal = std::get_if<StatementLimits::Refusal>(&outcome)) {
    queueError(reply_seq_, client_error::make(refusal->rate ? client_error::kStatementRateLimited
                                                            : client_error::kStatementConcurrencyLimited,
                                              refusal->message));
    return std::nullopt;
  }
  return std::move(std::get<StatementLimits::Ticket>(outcome));
}

}  // namespace sp::proxy
