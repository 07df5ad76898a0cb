// The errors of schema changes (docs/admin.md, "Schema changes"): 9150 a
// change failed on a table (the rest waits for RETRY SCHEMA CHANGE), or was
// adopted by another proxy; 9151 refused before any table changed.
#pragma once
#include <cstdint>
#include <string>

#include "proxy/core/admin_reply.hpp"

namespace sp::proxy {

inline constexpr uint16_t kSchemaChangeFailed = 9150;
inline constexpr uint16_t kSchemaChangeRefused = 9151;

inline AdminError schemaChangeRefused(std::string message) {
  return AdminError{kSchemaChangeRefused, "HY000", "shardproxy: " + message};
}

}  // namespace sp::proxy
