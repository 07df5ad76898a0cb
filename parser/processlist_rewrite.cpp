#include "parser/processlist_rewrite.hpp"

#include <vector>

#include "parser/lexer.hpp"
#include "parser/text_search.hpp"

namespace sp::parser {

namespace {

bool equalsUpper(std::string_view text, std::string_view upper_word) {
  if (text.size() != upper_word.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    if (c != upper_word[i]) return false;
  }
  return true;
}

// A name part spelling `w`, bare or quoted (`information_schema`.`processlist`).
bool names(const Token& t, std::string_view sql, std::string_view w) {
  if (t.kind == TokenKind::kIdentifier) return equalsUpper(t.text(sql), w);
  if (t.kind == TokenKind::kQuotedIdentifier) return equalsUpper(unquoteIdentifier(t.text(sql)), w);
  return false;
}

bool bareWord(const Token& t, std::string_view sql, std::string_view w) {
  return t.kind == TokenKind::kIdentifier && equalsUpper(t.text(sql), w);
}

struct Span {
  uint32_t begin;
  uint32_t end;
  bool is_table;  // else a CONNECTION_ID() call
};

// Every reference, in text order; nullopt when the lexer cannot read `sql`.
std::optional<std::vector<Span>> references(std::string_view sql, const Dialect& dialect, ProcesslistScope scope,
                                            bool& any_table) {
  const std::vector<Token> tokens = tokenize(sql, dialect);
  auto at = [&](size_t i) -> const Token& { return tokens[i < tokens.size() ? i : tokens.size() - 1]; };
  std::vector<Span> spans;
  any_table = false;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (t.isError()) return std::nullopt;
    // `x.information_schema` or `db.connection_id()` is something else.
    const bool qualified = i > 0 && tokens[i - 1].kind == TokenKind::kDot;
    if (!qualified && names(t, sql, "INFORMATION_SCHEMA") && at(i + 1).kind == TokenKind::kDot &&
        names(at(i + 2), sql, "PROCESSLIST")) {
      spans.push_back({t.begin, at(i + 2).end, true});
      any_table = true;
      i += 2;
      continue;
    }
    if (!qualified && scope.default_is_information_schema && names(t, sql, "PROCESSLIST") && i > 0 &&
        (bareWord(tokens[i - 1], sql, "FROM") || bareWord(tokens[i - 1], sql, "JOIN"))) {
      spans.push_back({t.begin, t.end, true});
      any_table = true;
      continue;
    }
    if (!qualified && bareWord(t, sql, "CONNECTION_ID") && at(i + 1).kind == TokenKind::kLeftParen &&
        at(i + 2).kind == TokenKind::kRightParen) {
      spans.push_back({t.begin, at(i + 2).end, false});
      i += 2;
    }
  }
  return spans;
}

}  // namespace

bool readsProcesslistTable(std::string_view sql, const Dialect& dialect, ProcesslistScope scope) {
  // Every statement asks: most never spell the table, and lexing them again would cost more than the answer.
  if (!containsIgnoringAsciiCase(sql, "processlist")) return false;
  bool any_table = false;
  auto spans = references(sql, dialect, scope, any_table);
  return spans && any_table;
}

std::optional<std::string> rewriteProcesslistTable(std::string_view sql, std::string_view table,
                                                   uint64_t connection_id, const Dialect& dialect,
                                                   ProcesslistScope scope) {
  if (!containsIgnoringAsciiCase(sql, "processlist")) return std::nullopt;
  bool any_table = false;
  auto spans = references(sql, dialect, scope, any_table);
  if (!spans || !any_table) return std::nullopt;
  const std::string id = std::to_string(connection_id);
  std::string out;
  out.reserve(sql.size() + spans->size() * table.size());
  size_t copied = 0;
  for (const Span& s : *spans) {
    out.append(sql.substr(copied, s.begin - copied));
    // Parenthesized: `1--CONNECTION_ID()` must not become `1-- 5`, a comment.
    if (s.is_table) out.append(table);
    else out.append("(").append(id).append(")");
    copied = s.end;
  }
  out.append(sql.substr(copied));
  return out;
}

}  // namespace sp::parser
