#include "proxy/schema/schema_command.hpp"

#include <charconv>
#include <vector>

#include "parser/lexer.hpp"

namespace sp::proxy {

std::optional<std::expected<SchemaCommand, std::string>> parseSchemaCommand(std::string_view sql) {
  std::vector<parser::Token> tokens = parser::tokenize(sql);
  while (tokens.size() > 1 && tokens[tokens.size() - 2].is(parser::TokenKind::kSemicolon)) {
    tokens.erase(tokens.end() - 2);
  }
  auto word = [&](size_t i, std::string_view w) { return i < tokens.size() && parser::tokenIsWord(tokens[i], sql, w); };
  const size_t count = tokens.size() - 1;  // without kEnd
  SchemaCommand command;
  if (word(0, "SHOW") && word(1, "SCHEMA") && word(2, "CHANGES")) {
    if (count != 3) return std::unexpected(std::string("usage: SHOW SCHEMA CHANGES"));
    return command;
  }
  const bool show_one = word(0, "SHOW") && word(1, "SCHEMA") && word(2, "CHANGE");
  const bool retry = word(0, "RETRY") && word(1, "SCHEMA") && word(2, "CHANGE");
  if (show_one || retry) {
    const std::string usage = show_one ? "usage: SHOW SCHEMA CHANGE <id>" : "usage: RETRY SCHEMA CHANGE <id>";
    if (count != 4 || !tokens[3].is(parser::TokenKind::kInteger)) return std::unexpected(usage);
    std::string_view digits = tokens[3].text(sql);
    if (std::from_chars(digits.data(), digits.data() + digits.size(), command.id).ec != std::errc{} ||
        command.id <= 0) {
      return std::unexpected(usage);
    }
    command.kind = show_one ? SchemaCommand::Kind::kShowOne : SchemaCommand::Kind::kRetry;
    return command;
  }
  if (word(0, "ALTER") || word(0, "TRUNCATE") || word(0, "RENAME") ||
      ((word(0, "CREATE") || word(0, "DROP")) && !word(1, "DATABASE") && !word(1, "SCHEMA") && !word(1, "USER"))) {
    command.kind = SchemaCommand::Kind::kDdl;
    command.statement = std::string(sql);
    return command;
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> schemaCommandHelp() {
  return {
      {"ALTER TABLE / CREATE [UNIQUE] INDEX / DROP INDEX / CREATE TABLE <logical> ...",
       "change every physical table of a logical table, online, recorded (SHOW SCHEMA CHANGES)"},
      {"SHOW SCHEMA CHANGES", "every schema change: state, tables changed, failed and pending, the first error"},
      {"SHOW SCHEMA CHANGE <id>", "one change's physical tables: state, algorithm, seconds, error"},
      {"RETRY SCHEMA CHANGE <id>", "run a failed change again from where it stopped"},
  };
}

}  // namespace sp::proxy
