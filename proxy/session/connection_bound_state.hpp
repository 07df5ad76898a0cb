// What keeps a session on one backend connection between statements outside
// a transaction and LOCK TABLES (docs/architecture.md, "Pinning"): state that
// lives only on that connection. The session keeps the connection for as long
// as any of it exists (until COM_RESET_CONNECTION / COM_CHANGE_USER).
//
// Why the reasons are kept apart: most of this state matters only to the
// statements that use it (a user variable, a temporary table, a named lock,
// FOUND_ROWS(), a prepared SQL statement). A statement spanning shards that
// uses none of it may run on pooled connections as in any other session,
// which is what one server would answer. Some of it changes how every later
// statement runs (a SET TRANSACTION for the next transaction, session
// settings the server reported but the proxy cannot carry to another
// connection, a multi-statement batch whose effects were not all seen): then
// a statement must not leave the pinned connection to run elsewhere.
#pragma once
#include <cstdint>
#include <string>

#include "parser/classify.hpp"

namespace sp::proxy {

class ConnectionBoundState {
 public:
  enum Reason : uint8_t {
    kUserVariables = 1 << 0,
    kTemporaryTables = 1 << 1,
    kNamedLocks = 1 << 2,
    kFoundRows = 1 << 3,
    kSqlPrepare = 1 << 4,
    kMultiStatements = 1 << 5,
    kNextTransaction = 1 << 6,
    kUncarriedSettings = 1 << 7,
  };

  void note(Reason reason) { bits_ |= reason; }
  void clear() { bits_ = 0; }
  bool any() const { return bits_ != 0; }
  bool has(Reason reason) const { return (bits_ & reason) != 0; }
  // True when a statement that uses none of the state itself may run on
  // other connections carrying the session's known settings.
  bool portable() const { return (bits_ & kAffectsEveryStatement) == 0; }
  // The reasons that make the state not portable, for error messages:
  // "SET TRANSACTION for the next transaction, ...". Empty when portable.
  std::string unportableReasons() const {
    std::string out;
    auto add = [&](Reason r, const char* text) {
      if (!has(r)) return;
      if (!out.empty()) out += ", ";
      out += text;
    };
    add(kNextTransaction, "SET TRANSACTION for the next transaction");
    add(kUncarriedSettings, "session settings the proxy cannot carry to another connection");
    add(kMultiStatements, "a multi-statement batch");
    return out;
  }

 private:
  static constexpr uint8_t kAffectsEveryStatement = kMultiStatements | kNextTransaction | kUncarriedSettings;
  uint8_t bits_ = 0;
};

// True when the statement itself reads or creates state that lives on one
// connection, so it must run on the connection that holds the session's.
inline bool usesConnectionBoundState(const parser::StatementInfo& info) {
  return info.uses_user_variable || info.creates_temporary_table || info.uses_named_lock || info.uses_found_rows ||
         info.multiple_statements || info.kind == parser::StatementKind::kLockTables ||
         info.kind == parser::StatementKind::kPrepareSql;
}

// True when the statement's own text accounts for a session-state change the
// server reports without naming it (SESSION_TRACK_STATE_CHANGE): it sets or
// reads user variables, creates a temporary table, prepares SQL, or sets the
// next transaction's characteristics. Each of those is a reason above.
inline bool explainsStateChange(const parser::StatementInfo& info) {
  if (info.uses_user_variable || info.creates_temporary_table || info.kind == parser::StatementKind::kPrepareSql) {
    return true;
  }
  if (info.kind != parser::StatementKind::kSet) return false;
  for (const auto& s : info.settings) {
    if (s.kind == parser::SessionSetting::Kind::kUserVariable ||
        s.kind == parser::SessionSetting::Kind::kNextTransaction) {
      return true;
    }
  }
  return false;
}

}  // namespace sp::proxy
