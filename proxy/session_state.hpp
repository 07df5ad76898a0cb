// Session state that MySQL keeps per connection and that the proxy must carry
// from one borrowed backend connection to the next: current database,
// character set, session variables, isolation level. A client session holds
// the desired state; each backend connection holds the state applied to it.
// Before a statement runs, the difference is applied with as few round trips
// as possible (usually none).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "parser/classify.hpp"

namespace sp::proxy {

struct SessionState {
  std::string database;
  std::string names;          // argument of SET NAMES ("utf8mb4" / "latin1 COLLATE latin1_bin")
  std::string character_set;  // argument of SET CHARACTER SET, empty when never set
  std::string isolation;      // tail of SET SESSION TRANSACTION ..., empty = server default
  std::map<std::string, std::string> variables;  // session system variables: name -> value text

  // Records the effect of one successful SET assignment. Returns false for
  // assignments that are not session state (globals, user variables, next-transaction).
  bool apply(const parser::SessionSetting& s);
};

// SQL statements that bring a connection in state `applied` to `desired`
// (the database is handled separately with COM_INIT_DB). A variable the
// connection has but the session never set is reset to DEFAULT.
std::vector<std::string> syncStatements(const SessionState& desired, const SessionState& applied);

// SET NAMES argument for a handshake collation id; unknown ids map to utf8mb4.
std::string namesForCollation(uint8_t collation_id);

// The collation id to log in to backends with (utf8mb4_general_ci) and its SET NAMES form.
inline constexpr uint8_t kBackendCollation = 45;

}  // namespace sp::proxy
