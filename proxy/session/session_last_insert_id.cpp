#include "proxy/session/session_last_insert_id.hpp"

namespace sp::proxy {

void SessionLastInsertId::onBorrow(ConnectionLoan conn) {
  if (holder_ && holder_->serial == conn.serial && conn.loan == holder_->loan + 1) holder_->loan = conn.loan;
}

std::optional<std::string> SessionLastInsertId::restoreFor(ConnectionLoan conn) const {
  if (holder_ && *holder_ == conn) return std::nullopt;
  return "SELECT LAST_INSERT_ID(" + std::to_string(value_) + ")";
}

void SessionLastInsertId::onRestored(ConnectionLoan conn) { holder_ = conn; }

void SessionLastInsertId::afterStatement(ConnectionLoan conn, uint64_t ok_insert_id) {
  // Without an insert id the holder keeps the value: on the holder itself the
  // server changed it as it does (an ERR'd insert keeps the ids it
  // generated), elsewhere the session's value did not move.
  if (ok_insert_id == 0) return;
  // Generated or explicit, the server's value on `conn` is the session's now.
  holder_ = conn;
  value_ = ok_insert_id;
}

void SessionLastInsertId::adopt(uint64_t value) {
  value_ = value;
  holder_.reset();
}

}  // namespace sp::proxy
