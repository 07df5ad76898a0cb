#include "parser/local_queries.hpp"

#include <vector>

#include "parser/lexer.hpp"

namespace sp::parser {

namespace {
bool wordIs(const Token& t, std::string_view sql, std::string_view word) {
  if (t.kind != TokenKind::kIdentifier) return false;
  std::string_view text = t.text(sql);
  if (text.size() != word.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    if (c != word[i]) return false;
  }
  return true;
}
}  // namespace

std::optional<std::string> connectionIdQuery(std::string_view sql) {
  std::vector<Token> tokens;
  for (const Token& t : tokenize(sql)) {
    if (!t.isSignificant() || t.kind == TokenKind::kEnd) continue;
    tokens.push_back(t);
  }
  if (!tokens.empty() && tokens.back().kind == TokenKind::kSemicolon) tokens.pop_back();
  if (tokens.size() < 4 || !wordIs(tokens[0], sql, "SELECT") || !wordIs(tokens[1], sql, "CONNECTION_ID") ||
      tokens[2].kind != TokenKind::kLeftParen || tokens[3].kind != TokenKind::kRightParen) {
    return std::nullopt;
  }
  size_t i = 4;
  if (i == tokens.size()) {
    return std::string(sql.substr(tokens[1].begin, tokens[3].end - tokens[1].begin));
  }
  const bool as = wordIs(tokens[i], sql, "AS");
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
