// The admin port's schema-change commands (docs/admin.md, "Schema changes"):
//   SHOW SCHEMA CHANGES            every change, its state and progress
//   SHOW SCHEMA CHANGE <id> [FROM PROXY <name>]
//                                  its physical tables, one row each (in a
//                                  fleet: another proxy's change)
//   RETRY SCHEMA CHANGE <id> [FROM PROXY <name>]
//                                  a failed change again, from where it
//                                  stopped (another proxy's: adopted here)
//   ALTER TABLE / CREATE [UNIQUE] INDEX / DROP INDEX / CREATE TABLE / TRUNCATE
//   on a logical table             as from a client with allow_ddl
// Pure: parsed with the SQL lexer.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sp::proxy {

struct SchemaCommand {
  enum class Kind : uint8_t { kShow, kShowOne, kRetry, kDdl };
  Kind kind = Kind::kShow;
  int64_t id = 0;         // kShowOne, kRetry
  std::string proxy;      // kShowOne, kRetry: FROM PROXY <name> (empty: this proxy)
  std::string statement;  // kDdl
};

// nullopt: not a schema-change command; an error: one, malformed.
std::optional<std::expected<SchemaCommand, std::string>> parseSchemaCommand(std::string_view sql);

// The commands, one per line, for HELP.
std::vector<std::pair<std::string, std::string>> schemaCommandHelp();

}  // namespace sp::proxy
