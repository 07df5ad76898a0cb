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

bool isUtf8(Charset charset) { return charset == Charset::kUtf8mb4 || charset == Charset::kUtf8mb3; }

// The table name PROCESSLIST as the server finds it (equalsInformationSchemaName:
// `PROCESSLİST` with U+0130 is the table). In other client charsets the
// bytes of that letter differ (latin5's 0xDD, ...): any one non-ASCII
// character in its place counts as the table there, so a name that would be
// an error on the server is answered from the proxy's sessions rather than
// a backend's threads ever being listed.
bool namesProcesslist(const Token& t, std::string_view sql, const Dialect& dialect) {
  std::string name;
  if (t.kind == TokenKind::kIdentifier) name = std::string(t.text(sql));
  else if (t.kind == TokenKind::kQuotedIdentifier) name = unquoteIdentifier(t.text(sql));
  else return false;
  if (isUtf8(dialect.charset)) return equalsInformationSchemaName(name, "PROCESSLIST");
  if (equalsUpper(name, "PROCESSLIST")) return true;
  constexpr std::string_view kHead = "PROCESSL", kTail = "ST";
  if (name.size() < kHead.size() + 1 + kTail.size() ||
      !equalsUpper(std::string_view(name).substr(0, kHead.size()), kHead) ||
      !equalsUpper(std::string_view(name).substr(name.size() - kTail.size()), kTail)) {
    return false;
  }
  const std::string_view letter = std::string_view(name).substr(kHead.size(), name.size() - kHead.size() - kTail.size());
  if (letter.size() > 3) return false;
  for (char c : letter) {
    if (static_cast<unsigned char>(c) < 0x80) return false;
  }
  return true;
}

// What may stand before a table named without its schema in a FROM clause:
// `FROM t`, `JOIN t`, `FROM a, t`, `FROM (t)`. A select-list item after a
// comma counts too (a wrongly rewritten column fails on the server; a missed
// table would list a backend's threads).
bool startsTableReference(const Token& before, std::string_view sql) {
  return bareWord(before, sql, "FROM") || bareWord(before, sql, "JOIN") || bareWord(before, sql, "STRAIGHT_JOIN") ||
         before.kind == TokenKind::kComma || before.kind == TokenKind::kLeftParen;
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
        namesProcesslist(at(i + 2), sql, dialect)) {
      spans.push_back({t.begin, at(i + 2).end, true});
      any_table = true;
      i += 2;
      continue;
    }
    if (!qualified && scope.default_is_information_schema && i > 0 && startsTableReference(tokens[i - 1], sql) &&
        namesProcesslist(t, sql, dialect) && at(i + 1).kind != TokenKind::kLeftParen) {
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
  // "processl": the table's `I` has a non-ASCII spelling (namesProcesslist).
  if (!containsIgnoringAsciiCase(sql, "processl")) return false;
  bool any_table = false;
  auto spans = references(sql, dialect, scope, any_table);
  return spans && any_table;
}

std::optional<std::string> rewriteProcesslistTable(std::string_view sql, std::string_view table,
                                                   uint64_t connection_id, const Dialect& dialect,
                                                   ProcesslistScope scope) {
  if (!containsIgnoringAsciiCase(sql, "processl")) return std::nullopt;
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
