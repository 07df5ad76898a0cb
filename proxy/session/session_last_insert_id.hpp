// Where a client session's LAST_INSERT_ID() lives (issue 20). MariaDB keeps
// it per server session and changes it only for generated ids and
// LAST_INSERT_ID(expr); an OK packet's insert id is also the value of an
// explicit insert (insert NULL, then insert 5: the OK says 5 while
// LAST_INSERT_ID() stays 1), so the OK alone cannot tell what the server holds.
//
// The session therefore remembers which backend connection holds its value,
// and at which loan (BackendConnection::loans: the pool counts them): when the
// session borrows that connection again and nobody borrowed it in between, the
// server's own value is there and nothing is sent. The session asks its pool
// for that connection first (BackendPool::acquire's `preferred`). A statement
// that reads the value on any other connection is preceded by
// `SELECT LAST_INSERT_ID(n)` with the best value the session has: exact when
// it was restored or never changed since, else the last OK's insert id (wrong
// only after an explicit-value insert whose connection another client took).
// Pure state: the caller borrows, sends and reads.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "proxy/backend/connection_loan.hpp"


namespace sp::proxy {

class SessionLastInsertId {
 public:
  // The connection to ask the pool for (its serial), 0 for any.
  uint64_t preferredConnection() const { return holder_ ? holder_->serial : 0; }
  // Every borrow: the holder borrowed again with nobody in between still holds the value.
  void onBorrow(ConnectionLoan conn);
  // Before a statement that reads LAST_INSERT_ID() on `conn`: the statement
  // that restores the session's value there, or nullopt when `conn` holds it.
  std::optional<std::string> restoreFor(ConnectionLoan conn) const;
  void onRestored(ConnectionLoan conn);
  // After a statement ran on `conn` (OK or ERR): `ok_insert_id` from its OK (0: none).
  void afterStatement(ConnectionLoan conn, uint64_t ok_insert_id);
  // A value the proxy composed itself (a write split over shards): no connection holds it.
  void adopt(uint64_t value);
  uint64_t value() const { return value_; }
  void reset() { *this = SessionLastInsertId{}; }

 private:
  uint64_t value_ = 0;  // restored or adopted, else the last OK's insert id
  std::optional<ConnectionLoan> holder_;
};

}  // namespace sp::proxy
