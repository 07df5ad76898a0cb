// The session's parser::Dialect: what the lexer and parser must assume to
// read the client's statements as the server will. The sources are what the
// server reported (session tracking carries the exact sql_mode and
// character_set_client after every change, procedures and SET STATEMENT
// included), the server's defaults read when the session started, and the
// backends' version for /*!NNNNN */ comments.
#include <string>
#include <string_view>

#include "proxy/backend/backend_pool.hpp"
#include "proxy/session/client_session.hpp"

namespace sp::proxy {

namespace {

// A carried variable value back to its text: 'a,b' -> a,b ('' inside -> ').
std::string unquoted(std::string_view literal) {
  if (literal.size() < 2 || literal.front() != '\'' || literal.back() != '\'') return std::string(literal);
  std::string out;
  for (size_t i = 1; i + 1 < literal.size(); ++i) {
    out += literal[i];
    if (literal[i] == '\'' && literal[i + 1] == '\'') ++i;
  }
  return out;
}

// "latin1 collate latin1_bin" -> latin1
std::string_view firstWord(std::string_view v) { return v.substr(0, v.find_first_of(" \t")); }

}  // namespace

void ClientSession::updateDialect() {
  std::string mode = server_sql_mode_;
  if (auto it = desired_.variables.find("sql_mode"); it != desired_.variables.end()) mode = unquoted(it->second);
  parser::Dialect d = parser::fromSqlMode(mode);
  d.server_version = server_version_;
  // With session tracking, SET NAMES / SET CHARACTER SET / character_set_client
  // all end up in the tracked character_set_client; before any of them, the
  // handshake's character set (desired_.names).
  std::string charset;
  if (auto it = desired_.variables.find("character_set_client"); it != desired_.variables.end()) {
    charset = unquoted(it->second);
  } else if (!desired_.character_set.empty()) {
    charset = std::string(firstWord(desired_.character_set));
  } else {
    charset = std::string(firstWord(desired_.names));
  }
  auto lookup = parser::charsetByName(charset);
  if (lookup.status == parser::CharsetStatus::kOk) d.charset = lookup.charset;
  else d.unknown_charset = true;
  dialect_ = d;
}

// The sharded tables live in the backends' database (backends[].database;
// the default backend's stands for all: docs/routing.md, "Table names").
routing::NameScope ClientSession::nameScope() {
  return routing::NameScope{defaultPool().config().database, desired_.database, names_case_sensitive_};
}

}  // namespace sp::proxy
