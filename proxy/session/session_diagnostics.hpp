// The diagnostics area of a client session: what SHOW WARNINGS / SHOW ERRORS
// show about the session's previous statement. On a server it lives in the
// connection; through the proxy the previous statement ran on a pooled
// backend connection that another session may be using now, so a plain
// `SHOW WARNINGS` would show someone else's notes (or nothing). The session
// keeps its own copy instead: an error from the ERR packet itself (the
// server's or the proxy's), warnings read back with SHOW WARNINGS on the
// statement's own connection before it is released (one round trip, only
// for statements that had warnings). Pure: no sockets (tests/unit/proxy).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/generic_packets.hpp"
#include "proxy/net/local_result.hpp"

namespace sp::proxy {

class SessionDiagnostics {
 public:
  struct Condition {
    std::string level;  // "Error", "Warning", "Note"
    uint32_t code = 0;
    std::string message;
    bool operator==(const Condition&) const = default;
  };

  // A statement succeeded with `warnings` conditions. True when the caller
  // must read them with SHOW WARNINGS (setConditions). Without warnings the
  // area is emptied only by a statement that `resets` it: on the server a
  // statement naming no table (`SELECT 1`, `SET @x = 1`, `DO 0`) keeps the
  // previous statement's conditions.
  bool onSuccess(uint16_t warnings, bool resets = true);
  // A statement failed: the area holds its error (the caller may then read
  // the whole area, notes before the error included, with setConditions).
  void onError(const protocol::ErrPacket& err);
  // The rows of SHOW WARNINGS (Level, Code, Message) read on the statement's
  // connection; rows that are not three values with a numeric code are skipped.
  void setConditions(const std::vector<std::vector<std::optional<std::string>>>& rows);

  const std::vector<Condition>& conditions() const { return conditions_; }

  // GET DIAGNOSTICS CONDITION n with n outside the area: as on the server
  // the statement succeeds and the area gains an Error 1758 "Invalid
  // condition number" (nothing else changes). True when `n` is such a number.
  bool takeInvalidConditionNumber(uint64_t n);

  // The answer to a diagnostics statement the session can give itself, or
  // nullopt when it is not one of these forms (it then goes to a backend):
  //   SHOW WARNINGS [LIMIT [offset,] n], SHOW ERRORS [LIMIT ...],
  //   SHOW COUNT(*) WARNINGS, SHOW COUNT(*) ERRORS.
  std::optional<LocalResult> answer(std::string_view sql) const;

  // The server's limit on conditions kept (max_error_count's default).
  static constexpr size_t kMaxConditions = 64;

 private:
  std::vector<Condition> conditions_;
  uint16_t total_ = 0;  // the statement's warning count (may exceed what is kept)
};

}  // namespace sp::proxy
