#include "parser/literal_text.hpp"

#include <vector>

#include "parser/lexer.hpp"

namespace sp::parser {

std::string_view literalText(const Expr& e, std::string_view sql) {
  std::string_view text = e.range.text(sql);
  if (text.empty() || text.front() != '(') return text;  // the common case: nothing to strip
  // Significant tokens only: whitespace, comments and version-comment markers
  // between the parentheses and the value are not part of it.
  const std::vector<Token> tokens = tokenize(text);
  size_t first = 0;
  size_t last = tokens.size() - 1;  // tokens end with one kEnd
  while (last - first >= 3 && tokens[first].kind == TokenKind::kLeftParen &&
         tokens[last - 1].kind == TokenKind::kRightParen) {
    ++first;
    --last;
  }
  if (first == 0) return text;  // not a parenthesized value after all: never guess
  return text.substr(tokens[first].begin, tokens[last - 1].end - tokens[first].begin);
}

}  // namespace sp::parser
