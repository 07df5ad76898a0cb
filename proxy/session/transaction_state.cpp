#include "proxy/session/transaction_state.hpp"

#include "protocol/constants.hpp"

namespace sp::proxy {

namespace status = protocol::status;

void TransactionState::onServerStatus(uint16_t flags) {
  in_transaction_ = flags & status::kInTrans;
  autocommit_ = flags & status::kAutocommit;
  no_backslash_escapes_ = flags & status::kNoBackslashEscapes;
  ansi_quotes_ = flags & status::kAnsiQuotes;
}

uint16_t TransactionState::clientStatus() const {
  uint16_t s = 0;
  // A deferred BEGIN is a transaction to the client; a lost one stays open
  // for it until it rolls back.
  if (in_transaction_ || pending_begin_ || lost_) s |= status::kInTrans;
  if (autocommit_) s |= status::kAutocommit;
  if (no_backslash_escapes_) s |= status::kNoBackslashEscapes;
  if (ansi_quotes_) s |= status::kAnsiQuotes;
  return s;
}

void TransactionState::onConnectionLost() {
  if (in_transaction_) lost_ = true;
  in_transaction_ = false;
}

TransactionState::LostAnswer TransactionState::answerWhileLost(parser::StatementKind kind, bool multiple_statements) {
  if (!lost_) return LostAnswer::kNotLost;
  if (multiple_statements) return LostAnswer::kRefused;
  if (kind == parser::StatementKind::kRollback) {
    lost_ = false;
    return LostAnswer::kRolledBack;
  }
  if (kind == parser::StatementKind::kCommit) {
    lost_ = false;
    return LostAnswer::kCommitFailed;
  }
  return LostAnswer::kRefused;
}

void TransactionState::reset(uint16_t initial_status) {
  pending_begin_.reset();
  lost_ = false;
  onServerStatus(initial_status & ~status::kInTrans);
}

}  // namespace sp::proxy
