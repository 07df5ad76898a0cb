#include "routing/access_check.hpp"

#include <vector>

#include "parser/lexer.hpp"

namespace sp::routing {

namespace {

bool isWord(const parser::Token& t, std::string_view sql, std::string_view word) {
  if (!t.is(parser::TokenKind::kIdentifier) || t.end - t.begin != word.size()) return false;
  std::string_view text = t.text(sql);
  for (size_t i = 0; i < word.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != word[i]) return false;
  }
  return true;
}

std::optional<PhysicalName> physicalIn(std::string_view sql, const CompiledShardMap& map, int depth,
                                      std::span<const parser::Token> given = {}) {
  std::vector<parser::Token> lexed;
  if (given.empty()) lexed = parser::tokenize(sql);
  const std::span<const parser::Token> tokens = given.empty() ? std::span<const parser::Token>(lexed) : given;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    const parser::Token& t = tokens[i];
    if (t.is(parser::TokenKind::kString) && depth < 4 && i > 0 &&
        (isWord(tokens[i - 1], sql, "from") || isWord(tokens[i - 1], sql, "immediate"))) {
      // PREPARE s FROM '...' / EXECUTE IMMEDIATE '...': the text runs later.
      if (auto inner = physicalIn(parser::unquoteString(t.text(sql)), map, depth + 1)) return inner;
      continue;
    }
    if (!t.is(parser::TokenKind::kIdentifier) && !t.is(parser::TokenKind::kQuotedIdentifier)) continue;
    std::string name = t.is(parser::TokenKind::kQuotedIdentifier) ? parser::unquoteIdentifier(t.text(sql))
                                                                   : std::string(t.text(sql));
    if (auto ref = map.findPhysical(name)) return PhysicalName{ref->shard->physical_table, ref->table->name};
  }
  return std::nullopt;
}

}  // namespace

std::optional<PhysicalName> physicalTableNamed(std::string_view sql, const CompiledShardMap& map) {
  return physicalIn(sql, map, 0);
}

std::optional<AccessDenial> checkAccess(std::string_view sql, const AccessRights& rights, const CompiledShardMap* map,
                                        bool backslash_escapes, std::span<const parser::Token> tokens) {
  if (rights.privileged) return std::nullopt;
  for (auto& need : parser::privilegesNeeded(sql, tokens, backslash_escapes)) {
    if (need.need == parser::Need::kDdl && rights.allow_ddl) continue;
    if (need.need == parser::Need::kUncheckedDynamicSql) {
      return Refusal{RouteErrorCode::kUncheckedDynamicSql,
                     "shardproxy: " + need.statement +
                         " of a statement text that is not a string literal cannot be checked against this "
                         "user's statement policy; write the statement as a literal (or use the binary protocol)"};
    }
    return AccessDenial{std::move(need)};
  }
  if (map && !rights.physical_tables) {
    // Under NO_BACKSLASH_ESCAPES a backslash is a plain character: split the
    // text where the server will (parser/statement_policy.cpp does the same).
    std::string plain;
    if (!backslash_escapes && sql.find('\\') != std::string_view::npos) {
      plain.assign(sql);
      for (char& c : plain) {
        if (c == '\\') c = ' ';
      }
      sql = plain;
      tokens = {};  // lexed from the changed text
    }
    if (auto named = physicalIn(sql, *map, 0, tokens)) {
      return Refusal{RouteErrorCode::kPrivateTable,
                     "shardproxy: " + named->physical + " is a physical shard table of " + named->logical +
                         "; applications use the logical table " + named->logical +
                         " (the proxy picks the shard). Physical tables are for users with physical_tables: true"};
    }
  }
  return std::nullopt;
}

}  // namespace sp::routing
