#include "parser/local_queries.hpp"

#include <cstdint>
#include <vector>

#include "parser/lexer.hpp"

namespace sp::parser {

std::optional<std::string> connectionIdQuery(std::string_view sql) {
  const std::vector<Token> all = tokenize(sql);
  return connectionIdQuery(sql, all);
}

std::optional<std::string> connectionIdQuery(std::string_view sql, std::span<const Token> all) {
  std::vector<Token> tokens;
  for (const Token& t : all) {
    if (!t.isSignificant() || t.kind == TokenKind::kEnd) continue;
    tokens.push_back(t);
  }
  if (!tokens.empty() && tokens.back().kind == TokenKind::kSemicolon) tokens.pop_back();
  if (tokens.size() < 4 || !tokenIsWord(tokens[0], sql, "SELECT") || !tokenIsWord(tokens[1], sql, "CONNECTION_ID") ||
      tokens[2].kind != TokenKind::kLeftParen || tokens[3].kind != TokenKind::kRightParen) {
    return std::nullopt;
  }
  size_t i = 4;
  if (i == tokens.size()) {
    return std::string(sql.substr(tokens[1].begin, tokens[3].end - tokens[1].begin));
  }
  const bool as = tokenIsWord(tokens[i], sql, "AS");
  if (as) ++i;
  if (i + 1 != tokens.size()) return std::nullopt;
  const Token& alias = tokens[i];
  if (alias.kind == TokenKind::kQuotedIdentifier) return unquoteIdentifier(alias.text(sql));
  if (alias.kind == TokenKind::kIdentifier && (as || alias.keyword == Keyword::kNone)) {
    return std::string(alias.text(sql));
  }
  if (alias.kind == TokenKind::kString) return unquoteString(alias.text(sql));
  return std::nullopt;
}

}  // namespace sp::parser

namespace sp::parser {

namespace {
// Significant tokens without kEnd and one trailing ';'.
std::vector<Token> significant(std::string_view sql) {
  std::vector<Token> tokens;
  for (const Token& t : tokenize(sql)) {
    if (!t.isSignificant() || t.kind == TokenKind::kEnd) continue;
    tokens.push_back(t);
  }
  if (!tokens.empty() && tokens.back().kind == TokenKind::kSemicolon) tokens.pop_back();
  return tokens;
}

std::optional<uint64_t> integerAt(const std::vector<Token>& tokens, size_t i, std::string_view sql) {
  if (i >= tokens.size() || tokens[i].kind != TokenKind::kInteger) return std::nullopt;
  uint64_t v = 0;
  for (char c : tokens[i].text(sql)) {
    if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}
}  // namespace

std::optional<bool> processlistQuery(std::string_view sql) {
  const std::vector<Token> tokens = significant(sql);
  if (tokens.size() == 2 && tokenIsWord(tokens[0], sql, "SHOW") && tokenIsWord(tokens[1], sql, "PROCESSLIST")) return false;
  if (tokens.size() == 3 && tokenIsWord(tokens[0], sql, "SHOW") && tokenIsWord(tokens[1], sql, "FULL") &&
      tokenIsWord(tokens[2], sql, "PROCESSLIST")) {
    return true;
  }
  return std::nullopt;
}

std::optional<uint64_t> diagnosticsConditionNumber(std::string_view sql) {
  const std::vector<Token> tokens = significant(sql);
  if (tokens.size() < 5 || !tokenIsWord(tokens[0], sql, "GET")) return std::nullopt;
  size_t i = 1;
  if (tokenIsWord(tokens[i], sql, "CURRENT")) ++i;
  if (i + 2 >= tokens.size() || !tokenIsWord(tokens[i], sql, "DIAGNOSTICS") || !tokenIsWord(tokens[i + 1], sql, "CONDITION")) {
    return std::nullopt;
  }
  return integerAt(tokens, i + 2, sql);
}

std::optional<DiagnosticsQuery> diagnosticsQuery(std::string_view sql) {
  const std::vector<Token> tokens = significant(sql);
  if (tokens.size() < 2 || !tokenIsWord(tokens[0], sql, "SHOW")) return std::nullopt;
  DiagnosticsQuery q;
  size_t i = 1;
  if (tokenIsWord(tokens[1], sql, "COUNT")) {
    if (tokens.size() != 6 || tokens[2].kind != TokenKind::kLeftParen || tokens[3].kind != TokenKind::kStar ||
        tokens[4].kind != TokenKind::kRightParen) {
      return std::nullopt;
    }
    q.count = true;
    i = 5;
  }
  if (tokenIsWord(tokens[i], sql, "ERRORS")) q.errors_only = true;
  else if (!tokenIsWord(tokens[i], sql, "WARNINGS")) return std::nullopt;
  ++i;
  if (i == tokens.size()) return q;
  if (q.count || !tokenIsWord(tokens[i], sql, "LIMIT")) return std::nullopt;
  auto first = integerAt(tokens, i + 1, sql);
  if (!first) return std::nullopt;
  if (i + 2 == tokens.size()) {
    q.limit = *first;
    return q;
  }
  if (i + 4 != tokens.size() || tokens[i + 2].kind != TokenKind::kComma) return std::nullopt;
  auto second = integerAt(tokens, i + 3, sql);
  if (!second) return std::nullopt;
  q.offset = *first;
  q.limit = *second;
  return q;
}

}  // namespace sp::parser
