#include "parser/set_statement.hpp"

#include <algorithm>
#include <cctype>

#include "parser/lexer.hpp"

namespace sp::parser {

std::optional<uint32_t> setStatementBody(std::string_view sql, const Dialect& dialect) {
  Lexer lexer(sql, dialect);
  Token t = lexer.nextSignificant();
  if (!t.isKeyword(Keyword::kSET)) return std::nullopt;
  t = lexer.nextSignificant();
  constexpr std::string_view kStatement = "statement";
  const std::string_view word = t.text(sql);
  if (!t.is(TokenKind::kIdentifier) || word.size() != kStatement.size() ||
      !std::equal(word.begin(), word.end(), kStatement.begin(),
                  [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; })) {
    return std::nullopt;
  }
  // The assignments end at FOR outside parentheses (a value may be a subquery).
  int depth = 0;
  for (t = lexer.nextSignificant(); !t.is(TokenKind::kEnd) && !t.isError(); t = lexer.nextSignificant()) {
    if (t.is(TokenKind::kLeftParen)) ++depth;
    if (t.is(TokenKind::kRightParen)) --depth;
    if (depth == 0 && t.isKeyword(Keyword::kFOR)) {
      Token body = lexer.nextSignificant();
      if (body.is(TokenKind::kEnd) || body.isError()) return std::nullopt;
      return body.begin;
    }
  }
  return std::nullopt;
}

}  // namespace sp::parser
