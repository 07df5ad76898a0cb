// The transaction state of one client session, as the server reports it.
// Fed by the status flags of every response on the session's own backend
// connections (SERVER_STATUS_IN_TRANS, SERVER_STATUS_AUTOCOMMIT,
// SERVER_STATUS_NO_BACKSLASH_ESCAPES), never by the spelling of statements:
// `SET autocommit = false`, `SET @@session.autocommit = @v` and a driver's
// setAutoCommit(false) all end up as the same flag. Pure (no sockets), so it
// is unit-tested with scripted server answers (tests/unit/proxy).
//
// It also keeps what the server cannot: a BEGIN the proxy holds back until the
// transaction's first statement shows which backend it belongs to, and a
// transaction lost with its backend connection. A lost transaction is not
// forgotten: until the client ends it, every statement is refused, ROLLBACK
// answers OK and COMMIT answers an error, so no statement that followed the
// loss can commit as if it were still inside the transaction (docs/routing.md,
// "Transactions").
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "parser/classify.hpp"

namespace sp::proxy {

class TransactionState {
 public:
  // `initial_status`: the status flags a fresh backend connection reported
  // (autocommit and NO_BACKSLASH_ESCAPES follow the server's global defaults).
  explicit TransactionState(uint16_t initial_status = kDefaultStatus) { reset(initial_status); }

  // Status flags of a response on the session's connection (one in sync with
  // the session's state: not a scatter shard's).
  void onServerStatus(uint16_t flags);
  // The flags every packet the proxy writes itself must carry.
  uint16_t clientStatus() const;

  bool inTransaction() const { return in_transaction_; }
  bool autocommit() const { return autocommit_; }
  bool noBackslashEscapes() const { return no_backslash_escapes_; }
  // Statements run now belong to a transaction (open, deferred, or implicit
  // under autocommit off): their effects must stay on one connection.
  bool transactional() const { return in_transaction_ || pending_begin_ || !autocommit_; }

  // BEGIN held back until the first statement picks the backend.
  void deferBegin(std::string sql) { pending_begin_ = std::move(sql); }
  const std::optional<std::string>& pendingBegin() const { return pending_begin_; }
  void clearPendingBegin() { pending_begin_.reset(); }

  // The connection that held the session's transaction broke.
  void onConnectionLost();
  bool lost() const { return lost_; }

  // What to do with a statement while the transaction is lost.
  enum class LostAnswer : uint8_t {
    kNotLost,       // no lost transaction: run the statement
    kRolledBack,    // ROLLBACK: answer OK, the session is out of the transaction
    kCommitFailed,  // COMMIT: answer an error, the session is out of the transaction
    kRefused,       // anything else: answer an error, stay lost
  };
  LostAnswer answerWhileLost(parser::StatementKind kind, bool multiple_statements);

  // COM_RESET_CONNECTION, COM_CHANGE_USER: back to a fresh connection's state.
  void reset(uint16_t initial_status);

  static constexpr uint16_t kDefaultStatus = 0x0002;  // SERVER_STATUS_AUTOCOMMIT

 private:
  bool in_transaction_ = false;
  bool autocommit_ = true;
  bool no_backslash_escapes_ = false;
  bool ansi_quotes_ = false;
  bool lost_ = false;
  std::optional<std::string> pending_begin_;
};

}  // namespace sp::proxy
