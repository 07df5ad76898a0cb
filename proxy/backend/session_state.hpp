// Session state that MySQL keeps per connection and that the proxy must carry
// from one borrowed backend connection to the next: current database,
// character set, session variables, isolation level. A client session holds
// the desired state; each backend connection holds the state applied to it.
// Before a statement runs, the difference is applied with as few round trips
// as possible (usually none).
#pragma once
#include <map>
#include <string_view>
#include <optional>
#include <string>
#include <vector>

#include "parser/classify.hpp"
#include "protocol/session_track.hpp"

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

// Adopts what the server reported (CLIENT_SESSION_TRACK) about one
// statement's effect on the session: every system variable and the current
// database go into `desired` and `applied`, as literals that replay the exact
// value on another connection (`SET sql_mode = CONCAT(...)` is carried as the
// resulting mode, not as the expression). Says whether the connection now
// holds state that cannot be carried to another one; the caller then keeps
// the connection for the session.
enum class TrackedAdoption : uint8_t {
  kCarried,
  // A STATE_CHANGE that no variable or schema entry explains, or any from a
  // statement other than SET/USE: user variables, temporary tables, SQL
  // prepared statements, roles. The caller knows whether its statement
  // explains it (one that sets a user variable does).
  kStateChanged,
  // A variable that only means something on this connection (insert_id,
  // rand_seed1, the session_track_* settings the proxy relies on) or that
  // cannot be replayed as a literal.
  kUncarriedVariable,
};
TrackedAdoption adoptTrackedChanges(const protocol::SessionChanges& changes, bool set_or_use, SessionState& desired,
                                    SessionState& applied);

// autocommit as the server's status flag says it is after a statement
// (`SET autocommit = @v`, a procedure, a driver's own command): recorded as
// 1 or 0 once it differs from the server's default, so that every connection
// the session borrows next is brought to it.
void carryAutocommit(bool on, bool default_on, SessionState& desired, SessionState& applied);

// The literal that sets variable `name` back to `value` as the server
// reported it (numbers bare, text quoted), as tracked changes are carried;
// nullopt when no literal reads the same under every sql_mode (a backslash).
std::optional<std::string> replayLiteral(std::string_view name, std::string_view value);

// The statement that asks a backend connection for the reports above.
inline constexpr std::string_view kEnableSessionTracking =
    "SET session_track_system_variables = '*', session_track_schema = ON, session_track_state_change = ON";

// SET NAMES argument for a handshake collation id: the collation itself for
// common ones, else its character set; ids MariaDB does not know map to utf8mb4.
std::string namesForCollation(uint32_t collation_id);

// The collation id to log in to backends with (utf8mb4_general_ci) and its SET NAMES form.
inline constexpr uint8_t kBackendCollation = 45;

}  // namespace sp::proxy
