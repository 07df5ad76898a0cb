#include "parser/placeholders.hpp"

#include "parser/lexer.hpp"

namespace sp::parser {

std::expected<std::string, std::string> substitutePlaceholders(std::string_view sql,
                                                               std::span<const std::string> literals) {
  std::string out;
  size_t extra = 0;
  for (const auto& l : literals) extra += l.size() + 2;
  out.reserve(sql.size() + extra);
  Lexer lexer(sql);
  size_t copied = 0;  // sql[0, copied) is in out
  size_t used = 0;
  for (;;) {
    Token t = lexer.next();
    if (t.is(TokenKind::kEnd)) break;
    if (t.isError()) return std::unexpected("the statement does not lex at offset " + std::to_string(t.begin));
    if (!t.is(TokenKind::kPlaceholder)) continue;
    if (used == literals.size()) {
      return std::unexpected("the statement has more placeholders than the " + std::to_string(literals.size()) +
                             " bound values");
    }
    out.append(sql.substr(copied, t.begin - copied));
    out.push_back(' ');
    out.append(literals[used++]);
    out.push_back(' ');
    copied = t.end;
  }
  if (used != literals.size()) {
    return std::unexpected("the statement has " + std::to_string(used) + " placeholders for " +
                           std::to_string(literals.size()) + " bound values");
  }
  out.append(sql.substr(copied));
  return out;
}

}  // namespace sp::parser
