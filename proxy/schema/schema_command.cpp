#include "proxy/schema/schema_command.hpp"

#include <charconv>
#include <vector>

#include "parser/lexer.hpp"

namespace sp::proxy {

namespace {

// A proxy's name: a bare word, or quoted when it holds other characters
// ('proxy-2'); empty when the token is neither.
std::string proxyName(const parser::Token& token, std::string_view sql) {
  std::string_view text = token.text(sql);
  if (token.is(parser::TokenKind::kIdentifier)) return std::string(text);
  const bool quoted = token.is(parser::TokenKind::kString) || token.is(parser::TokenKind::kQuotedIdentifier);
  if (!quoted || text.size() < 3 || text.front() != text.back()) return {};
  text = text.substr(1, text.size() - 2);
  if (text.find_first_of("'\"`\\") != std::string_view::npos) return {};
  return std::string(text);
}

}  // namespace

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
    const std::string usage = show_one ? "usage: SHOW SCHEMA CHANGE <id> [FROM PROXY <name>]"
                                       : "usage: RETRY SCHEMA CHANGE <id> [FROM PROXY <name>]";
    const bool from_proxy = count == 7 && word(4, "FROM") && word(5, "PROXY");
    if ((count != 4 && !from_proxy) || !tokens[3].is(parser::TokenKind::kInteger)) return std::unexpected(usage);
    if (from_proxy) {
      command.proxy = proxyName(tokens[6], sql);
      if (command.proxy.empty()) return std::unexpected(usage);
    }
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
      {"SHOW SCHEMA CHANGE <id> [FROM PROXY <name>]",
       "one change's physical tables: state, algorithm, seconds, error (another proxy's, in a fleet)"},
      {"RETRY SCHEMA CHANGE <id> [FROM PROXY <name>]",
       "run a failed change again from where it stopped; another proxy's (gone, or failed) is adopted here"},
  };
}

}  // namespace sp::proxy
