#include "proxy/ha/replication_sql.hpp"

#include <fmt/format.h>

namespace sp::proxy {

std::string sqlString(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    switch (c) {
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      case '\0': out += "\\0"; break;
      default: out += c;
    }
  }
  out += '\'';
  return out;
}

std::string changeMasterSql(const conf::HostPort& primary, std::string_view user, std::string_view password,
                            std::string_view use_gtid) {
  return fmt::format("CHANGE MASTER TO MASTER_HOST = {}, MASTER_PORT = {}, MASTER_USER = {}, MASTER_PASSWORD = {}, "
                     "MASTER_USE_GTID = {}",
                     sqlString(primary.host), primary.port, sqlString(user), sqlString(password), use_gtid);
}

std::string gtidWaitSql(std::string_view position, uint32_t timeout_ms) {
  return fmt::format("SELECT MASTER_GTID_WAIT({}, {}.{:03})", sqlString(position), timeout_ms / 1000,
                     timeout_ms % 1000);
}

}  // namespace sp::proxy
