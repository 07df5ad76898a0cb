// What an admin command answers: a result set, a bare OK, or an ERR. Shared
// by the admin server and the subsystems whose commands it runs (moves, the
// data lifecycle), which build replies without knowing the admin session.
#pragma once
#include <cstdint>
#include <string>
#include <variant>

#include "proxy/net/local_result.hpp"

namespace sp::proxy {

struct AdminOk {};
struct AdminError {
  uint16_t code = 1105;
  std::string sql_state = "HY000";
  std::string message;
};
using AdminReply = std::variant<LocalResult, AdminOk, AdminError>;

}  // namespace sp::proxy
