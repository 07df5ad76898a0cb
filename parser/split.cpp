// Statement splitting (see split.hpp): significant tokens are scanned with a
// block depth for compound statements; a ';' at depth 0 ends a statement.
#include "parser/split.hpp"

#include "parser/lexer.hpp"

namespace sp::parser {
namespace {

bool wordIs(const Token& t, std::string_view sql, std::string_view upper) {
  if (!t.is(TokenKind::kIdentifier) || t.end - t.begin != upper.size()) return false;
  for (size_t i = 0; i < upper.size(); ++i) {
    char c = sql[t.begin + i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != upper[i]) return false;
  }
  return true;
}

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Scans one statement starting at `begin`; returns the offset of its ending
// ';' (or sql.size()) and whether it had a significant token.
class StatementScanner {
 public:
  StatementScanner(std::string_view sql, size_t begin, const Dialect& dialect)
      : sql_(sql), begin_(begin), lexer_(sql.substr(begin), dialect) {}

  size_t scan(bool& significant) {
    significant = false;
    for (Token t = next(); !t.is(TokenKind::kEnd); t = next()) {
      if (t.isError() && !isLabelColon(t)) return sql_.size();  // the rest is one broken statement
      if (t.is(TokenKind::kSemicolon) && depth_ == 0 && parens_ == 0) return t.begin;
      significant = true;
      step(t);
    }
    return sql_.size();
  }

 private:
  Token next() {
    Token t = has_peek_ ? peeked_ : lexer_.nextSignificant();
    has_peek_ = false;
    peeked_ = Token{};
    t.begin += static_cast<uint32_t>(begin_);
    t.end += static_cast<uint32_t>(begin_);
    return t;
  }
  Token peek() {
    if (!has_peek_) {
      peeked_ = lexer_.nextSignificant();
      has_peek_ = true;
    }
    Token t = peeked_;
    t.begin += static_cast<uint32_t>(begin_);
    t.end += static_cast<uint32_t>(begin_);
    return t;
  }
  bool is(const Token& t, std::string_view upper) const { return wordIs(t, sql_, upper); }
  bool isLabelColon(const Token& t) const {
    return t.is(TokenKind::kErrorBadCharacter) && sql_[t.begin] == ':';
  }

  void open() {
    ++depth_;
    statement_start_ = true;
  }

  void step(const Token& t) {
    const bool first = index_++ == 0;
    const bool at_start = statement_start_;
    statement_start_ = false;
    if (t.is(TokenKind::kLeftParen)) ++parens_;
    if (t.is(TokenKind::kRightParen) && parens_ > 0) --parens_;
    if (first && is(t, "CREATE")) routine_header_ = true;
    if (routine_header_ && index_ <= 12 && (is(t, "PROCEDURE") || is(t, "FUNCTION") ||
                                            is(t, "TRIGGER") || is(t, "EVENT"))) {
      routine_ = true;
    }
    if (parens_ > 0) return;
    if (isLabelColon(t)) {  // label: BEGIN / LOOP / ...
      statement_start_ = true;
      return;
    }
    if (t.is(TokenKind::kSemicolon)) {  // inside a block
      statement_start_ = true;
      return;
    }
    if (is(t, "END")) {
      if (depth_ > 0) --depth_;
      const Token n = peek();
      if (is(n, "IF") || is(n, "CASE") || is(n, "LOOP") || is(n, "WHILE") || is(n, "REPEAT") ||
          is(n, "FOR")) {
        next();  // END IF etc. close the one block
      }
      return;
    }
    if (is(t, "THEN") || is(t, "ELSE") || is(t, "DO")) {
      statement_start_ = true;
      return;
    }
    if (is(t, "CASE")) return open();  // CASE ... END [CASE], expression or statement
    const bool body_position = depth_ > 0 ? at_start : (first || routine_);
    if (is(t, "BEGIN")) {
      const Token n = peek();
      if (is(n, "NOT")) {
        next();
        next();  // ATOMIC
        return open();
      }
      // Top-level BEGIN [WORK] starts a transaction; inside a routine or a
      // block (handler bodies too) BEGIN opens a compound statement.
      if (depth_ > 0 || (routine_ && !first)) return open();
      return;
    }
    if (!body_position) return;
    if (is(t, "IF")) {
      const Token n = peek();
      // IF NOT EXISTS / IF EXISTS in DDL headers, IF(...) the function.
      if (is(n, "NOT") || is(n, "EXISTS") || (depth_ == 0 && !first && n.is(TokenKind::kLeftParen))) return;
      return open();
    }
    if (is(t, "FOR")) {
      if (is(peek(), "EACH") || is(peek(), "UPDATE") || is(peek(), "SYSTEM_TIME")) return;
      return open();
    }
    if (is(t, "LOOP") || is(t, "REPEAT") || is(t, "WHILE")) {
      if (depth_ == 0 && !first && peek().is(TokenKind::kLeftParen)) return;  // REPEAT('a', 3)
      return open();
    }
  }

  std::string_view sql_;
  size_t begin_;
  Lexer lexer_;
  Token peeked_;
  bool has_peek_ = false;
  size_t index_ = 0;
  int depth_ = 0;
  int parens_ = 0;
  bool statement_start_ = true;
  bool routine_header_ = false;
  bool routine_ = false;
};

}  // namespace

std::vector<StatementSpan> splitStatements(std::string_view sql, const Dialect& dialect) {
  std::vector<StatementSpan> spans;
  size_t begin = 0;
  while (begin < sql.size()) {
    // The server skips whitespace before the next statement (not comments).
    while (begin < sql.size() && isSpace(sql[begin])) ++begin;
    if (begin >= sql.size()) break;
    StatementScanner scanner(sql, begin, dialect);
    bool significant = false;
    const size_t end = scanner.scan(significant);
    if (significant) spans.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(end)});
    begin = end + 1;
  }
  return spans;
}

}  // namespace sp::parser
