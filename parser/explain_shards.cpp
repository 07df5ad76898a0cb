#include "parser/explain_shards.hpp"

#include "parser/lexer.hpp"

namespace sp::parser {

namespace {
bool wordIs(const Token& t, std::string_view sql, std::string_view word) {
  if (t.kind != TokenKind::kIdentifier) return false;
  auto text = t.text(sql);
  if (text.size() != word.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != word[i]) return false;
  }
  return true;
}
}  // namespace

std::optional<std::string_view> explainShardsTarget(std::string_view sql) {
  Lexer lexer(sql);
  Token first = lexer.nextSignificant();
  if (!wordIs(first, sql, "EXPLAIN")) return std::nullopt;
  Token second = lexer.nextSignificant();
  if (!wordIs(second, sql, "SHARDS")) return std::nullopt;
  std::string_view rest = sql.substr(second.end);
  size_t start = rest.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return std::string_view{};
  return rest.substr(start);
}

}  // namespace sp::parser
