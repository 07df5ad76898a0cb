#include "parser/xa_ids.hpp"

#include <vector>

#include "parser/lexer.hpp"

namespace sp::parser {

namespace {

// The statement's tokens without version-comment markers: /*!XA*/ COMMIT 'x' is XA COMMIT 'x' to the server.
std::vector<Token> xaTokens(std::string_view sql, const Dialect& dialect) {
  std::vector<Token> out;
  for (const Token& t : tokenize(sql, dialect)) {
    if (t.is(TokenKind::kVersionCommentBegin) || t.is(TokenKind::kVersionCommentEnd)) continue;
    out.push_back(t);
  }
  return out;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// X'7370' or 0x7370 as bytes; nullopt when malformed.
std::optional<std::string> hexBytes(std::string_view text) {
  std::string_view digits;
  if (text.size() >= 3 && (text[0] == 'x' || text[0] == 'X') && text[1] == '\'' && text.back() == '\'') {
    digits = text.substr(2, text.size() - 3);
  } else if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    digits = text.substr(2);
  } else {
    return std::nullopt;
  }
  std::string out;
  // 0x7 is one byte 0x07: an odd count has an implicit leading zero.
  size_t i = 0;
  if (digits.size() % 2 == 1) {
    const int d = hexDigit(digits[0]);
    if (d < 0) return std::nullopt;
    out.push_back(static_cast<char>(d));
    i = 1;
  }
  for (; i < digits.size(); i += 2) {
    const int hi = hexDigit(digits[i]), lo = hexDigit(digits[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

bool isXaVerb(const Token& t, std::string_view sql) {
  for (std::string_view verb : {"START", "BEGIN", "END", "PREPARE", "COMMIT", "ROLLBACK"}) {
    if (tokenIsWord(t, sql, verb)) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> reservedXidRefusal(std::string_view sql, std::string_view prefix,
                                              const Dialect& dialect) {
  // Cheap first: almost no statement spells "xa".
  bool mentions = false;
  for (size_t i = 0; i + 1 < sql.size() && !mentions; ++i) {
    mentions = (sql[i] == 'x' || sql[i] == 'X') && (sql[i + 1] == 'a' || sql[i + 1] == 'A');
  }
  if (!mentions) return std::nullopt;
  const std::vector<Token> t = xaTokens(sql, dialect);
  if (t.size() < 3 || !tokenIsWord(t[0], sql, "XA") || !isXaVerb(t[1], sql)) return std::nullopt;
  const std::string reserved = std::string(prefix) + "-";
  const Token& id = t[2];
  std::optional<std::string> gtrid;
  if (id.is(TokenKind::kString)) {
    const std::string_view text = id.text(sql);
    const bool plain = !text.empty() && (text.front() == '\'' || text.front() == '"');
    if (plain && !(t.size() > 3 && t[3].is(TokenKind::kString))) gtrid = unquoteString(text, dialect);
  } else if (id.is(TokenKind::kHexString)) {
    gtrid = hexBytes(id.text(sql));
  } else if (!id.is(TokenKind::kBitString)) {
    return std::nullopt;  // not an id: the server refuses the syntax
  }
  if (!gtrid) {
    return "shardproxy: this XA transaction id cannot be checked against the proxy's own ids ('" + reserved +
           "...', transactions.xid_prefix); write it as a quoted string or a hex literal";
  }
  if (!gtrid->starts_with(reserved)) return std::nullopt;
  return "shardproxy: XA transaction ids beginning with '" + reserved +
         "' are the proxy's own (transactions.xid_prefix: its transactions across backends and their recovery); a "
         "client cannot start, end, prepare, commit or roll them back";
}

}  // namespace sp::parser
