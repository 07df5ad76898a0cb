// The statement policy of a client session (docs/security.md): what the
// logged-in user may run, checked before a statement is planned. The analysis
// is routing::checkAccess; here a denial becomes the server's own ERR.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "parser/text_search.hpp"
#include "conf/config.hpp"
#include "parser/statement_policy.hpp"
#include "parser/xa_ids.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"
#include "routing/access_cache.hpp"
#include "routing/allow_list.hpp"

namespace sp::proxy {

namespace {

routing::AllowLists allowListsOf(const conf::UserAccount* account) {
  routing::AllowLists lists;
  if (!account) return lists;
  if (account->allow_schemas) lists.schemas = &*account->allow_schemas;
  if (account->allow_tables) lists.tables = &*account->allow_tables;
  return lists;
}

routing::AccessRights rightsOf(const conf::UserAccount* account) {
  if (!account) return {};  // unknown (cannot happen after login): least privilege
  return {account->privileged, account->allow_ddl, account->physical_tables};
}

// MariaDB's wording for a missing privilege (errmsg-utf8.txt), with the
// session's user and host.
protocol::ErrPacket privilegeError(const parser::PrivilegeNeed& need, std::string_view user, std::string_view host,
                                   std::string_view session_database) {
  using parser::Need;
  auto specific = [](std::string_view privilege) {  // ER_SPECIFIC_ACCESS_DENIED_ERROR
    return protocol::ErrPacket{1227, "42000", fmt::format("Access denied; you need (at least one of) the {} "
                                                          "privilege(s) for this operation", privilege)};
  };
  auto database = [&](std::string_view db) {  // ER_DBACCESS_DENIED_ERROR
    return protocol::ErrPacket{1044, "42000", fmt::format("Access denied for user '{}'@'{}' to database '{}'",
                                                          user, host, db)};
  };
  auto table = [&](std::string_view command, std::string_view db, std::string_view object) {  // ER_TABLEACCESS_DENIED_ERROR
    return protocol::ErrPacket{1142, "42000", fmt::format("{} command denied to user '{}'@'{}' for table `{}`.`{}`",
                                                          command, user, host, db, object)};
  };
  const std::string_view db = need.database.empty() ? session_database : std::string_view(need.database);
  switch (need.need) {
    case Need::kGlobalPrivilege: return specific(need.privilege);
    case Need::kSystemTable: return table(need.command, need.database, need.object);
    case Need::kDatabase: return database(need.object);
    case Need::kDdl:
      if (need.routine) return database(db);
      if (need.object.empty()) return specific(need.command);
      return table(need.command, db, need.object);
    case Need::kUncheckedDynamicSql: break;  // a Refusal, not a PrivilegeNeed (routing/access_check.cpp)
  }
  return specific(need.statement);
}

}  // namespace

std::string_view ClientSession::peerHost() const { return std::string_view(peer_).substr(0, peer_.rfind(':')); }

std::optional<protocol::ErrPacket> ClientSession::schemaRefusal(std::string_view database) {
  const routing::AllowLists lists = allowListsOf(worker_.context().config().findUser(user_));
  if (database.empty() || routing::schemaAllowed(lists, database)) return std::nullopt;
  spdlog::info("session {}: user {}: schema refused by allow_schemas", connection_id_, user_);
  return protocol::ErrPacket{1044, "42000", fmt::format("Access denied for user '{}'@'{}' to database '{}'", user_,
                                                        peerHost(), database)};
}

std::optional<protocol::ErrPacket> ClientSession::accessRefusal(std::string_view sql,
                                                               std::span<const parser::Token> tokens) {
  const auto& config = worker_.context().config();
  // Whatever the user's rights: the proxy's own XA branches are not a client's to end.
  if (auto reserved = parser::reservedXidRefusal(sql, config.transactions.xid_prefix, dialect_)) {
    spdlog::warn("session {}: user {}: an XA statement naming the proxy's own transaction ids refused", connection_id_,
                 user_);
    return client_error::make(client_error::kXaReservedXid, *reserved);
  }
  const conf::UserAccount* account = config.findUser(user_);
  const routing::AccessRights rights = rightsOf(account);
  auto map = mapSnapshot();
  if (const routing::AllowLists lists = allowListsOf(account); lists.restricts()) {
    // Explicit lists bind every user that has them, privileged ones too.
    if (auto out = routing::checkAllowLists(sql, lists, desired_.database, map.get(), dialect_)) {
      spdlog::info("session {}: user {}: {} refused by the allow lists", connection_id_, user_,
                   out->schema ? "schema" : "table");
      if (out->schema) {
        return protocol::ErrPacket{1044, "42000", fmt::format("Access denied for user '{}'@'{}' to database '{}'",
                                                              user_, peerHost(), out->database)};
      }
      return protocol::ErrPacket{1142, "42000", fmt::format("{} command denied to user '{}'@'{}' for table `{}`.`{}`",
                                                            out->command, user_, peerHost(), out->database,
                                                            out->table)};
    }
  }
  if (rights.privileged) return nestedKillRefusal(sql);
  auto denial = worker_.accessCache().check(sql, rights, map.get(), !txn_.noBackslashEscapes(), tokens);
  if (!denial) return std::nullopt;
  // The statement text is not logged: it may hold a password.
  if (const auto* refusal = std::get_if<routing::Refusal>(&*denial)) {
    auto info = routing::routeErrorInfo(refusal->code);
    spdlog::info("session {}: user {}: statement refused ({})", connection_id_, user_, info.name);
    return protocol::ErrPacket{info.mysql_errno, std::string(info.sqlstate), refusal->message};
  }
  const auto& need = std::get<parser::PrivilegeNeed>(*denial);
  if (need.statement == parser::kNestedKillStatement) return nestedKillError();
  spdlog::info("session {}: user {}: {} refused by the statement policy", connection_id_, user_, need.statement);
  return privilegeError(need, user_, peerHost(), desired_.database);
}

protocol::ErrPacket ClientSession::nestedKillError() {
  // As the server refuses what it cannot prepare (ER_UNSUPPORTED_PS), with why.
  return client_error::make(client_error::kUnsupportedPs,
      "This command is not supported in the prepared statement protocol yet (shardproxy: a KILL inside PREPARE, "
      "EXECUTE IMMEDIATE or a stored program would run on a backend, where its id names a server thread; send KILL "
      "as a statement of its own, or prepare it with the binary protocol)");
}

std::optional<protocol::ErrPacket> ClientSession::nestedKillRefusal(std::string_view sql) const {
  // Privileged accounts skip the statement policy, but not this rule: it
  // protects other sessions, not the server. Statements without the word
  // cost one scan.
  if (!parser::containsIgnoringAsciiCase(sql, "kill")) return std::nullopt;
  for (const auto& need : parser::privilegesNeeded(sql, !txn_.noBackslashEscapes())) {
    if (need.statement == parser::kNestedKillStatement) return nestedKillError();
  }
  return std::nullopt;
}

}  // namespace sp::proxy
