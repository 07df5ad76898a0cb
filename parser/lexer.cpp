#include "parser/lexer.hpp"

#include <array>
#include <limits>

namespace sp::parser {
namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool isWordStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;  // UTF-8 identifiers
}
bool isWordChar(char c) { return isWordStart(c) || isDigit(c); }
bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool lexerWordEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace

namespace {
thread_local uint64_t lexer_runs = 0;
}  // namespace

uint64_t lexerRuns() { return lexer_runs; }

Lexer::Lexer(std::string_view sql, const Dialect& dialect)
    // Offsets are 32-bit; a MySQL packet cannot carry more than 1 GiB anyway.
    : sql_(sql.substr(0, std::numeric_limits<uint32_t>::max())),
      dialect_(dialect),
      multi_byte_(needsMultiByteLexing(dialect.charset)),
      latin1_(dialect.charset == Charset::kLatin1) {
  ++lexer_runs;
}

// Word characters from i on; in multi-byte charsets whole characters are
// stepped over (a gbk 0x955C is one letter, not a letter and a backslash) and
// a lead byte without a valid trail byte ends the word, as in the server.
inline size_t Lexer::skipWordChars(size_t i) const {
  if (!multi_byte_ && !latin1_) {  // the utf8mb4 fast path
    while (i < sql_.size() && isWordChar(sql_[i])) ++i;
    return i;
  }
  if (!multi_byte_) {
    while (i < sql_.size() && isWordChar(sql_[i]) && sql_[i] != '\xA0') ++i;
    return i;
  }
  const auto* data = reinterpret_cast<const unsigned char*>(sql_.data());
  while (i < sql_.size() && isWordChar(sql_[i])) {
    const size_t length = mbCharLength(dialect_.charset, data + i, data + sql_.size());
    if (length == 0) break;
    i += length;
  }
  return i;
}

// Index after the "*/" closing a comment whose body starts at i; `nesting`
// levels of inner "/* */" are allowed (MariaDB: one inside a skipped
// versioned comment, none in a plain comment).
size_t Lexer::skipComment(size_t i, int nesting) const {
  while (i + 1 < sql_.size()) {
    if (sql_[i] == '*' && sql_[i + 1] == '/') return i + 2;
    if (nesting > 0 && sql_[i] == '/' && sql_[i + 1] == '*') {
      i = skipComment(i + 2, nesting - 1);
      if (i == std::string_view::npos) return i;
      continue;
    }
    ++i;
  }
  return std::string_view::npos;
}

Token Lexer::make(TokenKind kind, size_t begin) const {
  return Token{kind, Keyword::kNone, static_cast<uint32_t>(begin), static_cast<uint32_t>(pos_)};
}

Token Lexer::nextSignificant() {
  for (;;) {
    Token token = next();
    if (token.isSignificant()) return token;
  }
}

Token Lexer::next() {
  const size_t begin = pos_;
  Token token;
  if (pos_ >= sql_.size()) {
    if (in_version_comment_) {
      // Only reachable when the "*/" seen at the opening was inside a string;
      // a zero-length token at the end keeps tokens ordered.
      in_version_comment_ = false;
      return make(TokenKind::kErrorUnterminatedComment, sql_.size());
    }
    return make(TokenKind::kEnd, sql_.size());
  }
  const char c = sql_[pos_];
  if (isSpace(c)) {
    while (pos_ < sql_.size() && isSpace(sql_[pos_])) ++pos_;
    return make(TokenKind::kWhitespace, begin);
  }
  if (c == '\xA0' && latin1_) {  // latin1's no-break space is whitespace to MariaDB
    ++pos_;
    return make(TokenKind::kWhitespace, begin);
  }
  if (isDigit(c) || (c == '.' && pos_ + 1 < sql_.size() && isDigit(sql_[pos_ + 1]) &&
                     canStartDecimalAfterDot())) {
    token = lexNumber(begin);
  } else if (isWordStart(c)) {
    token = lexWord(begin);
  } else if (c == '\'' || (c == '"' && !dialect_.ansi_quotes)) {
    token = lexQuoted(begin, begin, TokenKind::kString);
  } else if (c == '`' || c == '"' || (c == '[' && dialect_.mssql_brackets)) {
    token = lexQuoted(begin, begin, TokenKind::kQuotedIdentifier);
  } else if (c == '@') {
    token = lexVariable(begin);
  } else if (c == '#') {
    token = lexLineComment(begin);
  } else {
    token = lexOperator(begin);
  }
  if (token.isSignificant()) last_significant_ = token.kind;
  return token;
}

bool Lexer::canStartDecimalAfterDot() const {
  // `t.5` would be a qualified name, not t followed by .5
  return last_significant_ != TokenKind::kIdentifier &&
         last_significant_ != TokenKind::kQuotedIdentifier;
}

Token Lexer::lexLineComment(size_t begin) {
  while (pos_ < sql_.size() && sql_[pos_] != '\n') ++pos_;
  return make(TokenKind::kComment, begin);
}

Token Lexer::lexBlockComment(size_t begin, int nesting) {
  // pos_ is just after "/*" (or "/*+", or a skipped version marker).
  const bool hint = begin + 2 < sql_.size() && sql_[begin + 2] == '+';  // "/*" may end the text
  const size_t end = skipComment(pos_, nesting);
  if (end == std::string_view::npos) {
    pos_ = sql_.size();
    return make(TokenKind::kErrorUnterminatedComment, begin);
  }
  pos_ = end;
  return make(hint ? TokenKind::kHint : TokenKind::kComment, begin);
}

Token Lexer::lexSlashOrComment(size_t begin) {
  if (pos_ + 1 >= sql_.size() || sql_[pos_ + 1] != '*') {
    ++pos_;
    return make(TokenKind::kSlash, begin);
  }
  pos_ += 2;
  const bool mariadb = pos_ + 1 < sql_.size() && sql_[pos_] == 'M' && sql_[pos_ + 1] == '!';
  if (mariadb || (pos_ < sql_.size() && sql_[pos_] == '!')) {
    pos_ += mariadb ? 2 : 1;
    // MariaDB's sql_lex.cc: exactly 5 digits, or 6 when a sixth follows;
    // fewer digits is no version at all (the digits are content).
    size_t digits = 0;
    while (digits < 6 && pos_ + digits < sql_.size() && isDigit(sql_[pos_ + digits])) ++digits;
    if (digits >= 5) {
      uint32_t version = 0;
      for (size_t i = 0; i < digits; ++i) version = version * 10 + uint32_t(sql_[pos_ + i] - '0');
      // MySQL 5.7+ syntax MariaDB may not know: skipped unless /*M!.
      const bool executed = version <= dialect_.server_version &&
                            (version < 50700 || version > 99999 || mariadb);
      if (!executed) return lexBlockComment(begin, 1);
      pos_ += digits;
    }
    if (sql_.find("*/", pos_) == std::string_view::npos) {
      pos_ = sql_.size();  // never closed: the whole rest is one error token
      return make(TokenKind::kErrorUnterminatedComment, begin);
    }
    in_version_comment_ = true;
    return make(TokenKind::kVersionCommentBegin, begin);
  }
  return lexBlockComment(begin, 0);
}

Token Lexer::lexNumber(size_t begin) {
  auto at = [&](size_t i) { return i < sql_.size() ? sql_[i] : '\0'; };
  if (at(pos_) == '0' && (at(pos_ + 1) == 'x' || at(pos_ + 1) == 'b')) {
    const bool hex = at(pos_ + 1) == 'x';
    size_t i = pos_ + 2;
    while (hex ? isHexDigit(at(i)) : (at(i) == '0' || at(i) == '1')) ++i;
    if (i > pos_ + 2 && !isWordChar(at(i))) {
      pos_ = i;
      return make(hex ? TokenKind::kHexString : TokenKind::kBitString, begin);
    }
    // 0xZZ or 0b12: MySQL reads it as an identifier; fall through.
  }
  TokenKind kind = TokenKind::kInteger;
  while (isDigit(at(pos_))) ++pos_;
  if (at(pos_) == '.') {
    kind = TokenKind::kDecimal;
    ++pos_;
    while (isDigit(at(pos_))) ++pos_;
  }
  const char e = at(pos_);
  if (e == 'e' || e == 'E') {
    size_t i = pos_ + 1;
    if (at(i) == '+' || at(i) == '-') ++i;
    if (isDigit(at(i))) {
      while (isDigit(at(i))) ++i;
      pos_ = i;
      return make(TokenKind::kFloat, begin);
    }
  }
  if (kind == TokenKind::kInteger && isWordChar(at(pos_))) {
    // 123abc is a valid identifier in MySQL (e.g. table `2024_logs`).
    pos_ = skipWordChars(pos_);
    return make(TokenKind::kIdentifier, begin);
  }
  return make(kind, begin);
}

Token Lexer::lexWord(size_t begin) {
  pos_ = skipWordChars(pos_);
  if (pos_ == begin) {  // a lead byte without its trail byte: the server rejects it
    ++pos_;
    return make(TokenKind::kErrorBadCharacter, begin);
  }
  const std::string_view word = sql_.substr(begin, pos_ - begin);
  const char quote = pos_ < sql_.size() ? sql_[pos_] : '\0';
  if (quote == '\'' && word.size() == 1) {
    if (word[0] == 'x' || word[0] == 'X') return lexQuotedDigits(begin, true);
    if (word[0] == 'b' || word[0] == 'B') return lexQuotedDigits(begin, false);
    if (word[0] == 'n' || word[0] == 'N') return lexQuoted(begin, pos_, TokenKind::kString);
  }
  if ((quote == '\'' || (quote == '"' && !dialect_.ansi_quotes)) && word.size() > 1 && word[0] == '_') {
    return lexQuoted(begin, pos_, TokenKind::kString);  // _utf8mb4'x'
  }
  Token token = make(TokenKind::kIdentifier, begin);
  token.keyword = lookupKeyword(word);
  return token;
}

Token Lexer::lexQuoted(size_t begin, size_t quote_pos, TokenKind kind) {
  const char quote = sql_[quote_pos] == '[' ? ']' : sql_[quote_pos];
  const bool backslash_escapes = kind != TokenKind::kQuotedIdentifier && !dialect_.no_backslash_escapes;
  const auto* data = reinterpret_cast<const unsigned char*>(sql_.data());
  size_t i = quote_pos + 1;
  while (i < sql_.size()) {
    const char c = sql_[i];
    size_t length = 0;
    if (static_cast<unsigned char>(c) >= 0x80 && multi_byte_ &&
        (length = mbCharLength(dialect_.charset, data + i, data + sql_.size())) > 1) {
      i += length;  // a trail byte may be '\\' or a quote: part of the character
    } else if (c == '\\' && backslash_escapes) {
      i += 2;
    } else if (c == quote) {
      if (i + 1 < sql_.size() && sql_[i + 1] == quote) {
        i += 2;  // doubled quote
      } else {
        pos_ = i + 1;
        return make(kind, begin);
      }
    } else {
      ++i;
    }
  }
  pos_ = sql_.size();
  return make(kind == TokenKind::kQuotedIdentifier ? TokenKind::kErrorUnterminatedQuotedIdentifier
                                                   : TokenKind::kErrorUnterminatedString,
              begin);
}

Token Lexer::lexQuotedDigits(size_t begin, bool hex) {
  // pos_ is at the opening quote of X'..' or b'..'.
  size_t close = sql_.find('\'', pos_ + 1);
  if (close == std::string_view::npos) {
    pos_ = sql_.size();
    return make(TokenKind::kErrorUnterminatedString, begin);
  }
  const std::string_view digits = sql_.substr(pos_ + 1, close - pos_ - 1);
  pos_ = close + 1;
  bool valid = !hex || digits.size() % 2 == 0;
  for (char c : digits) valid = valid && (hex ? isHexDigit(c) : (c == '0' || c == '1'));
  if (!valid) return make(TokenKind::kErrorBadLiteral, begin);
  return make(hex ? TokenKind::kHexString : TokenKind::kBitString, begin);
}

Token Lexer::lexVariable(size_t begin) {
  auto at = [&](size_t i) { return i < sql_.size() ? sql_[i] : '\0'; };
  if (at(pos_ + 1) == '@') {
    size_t i = skipWordChars(pos_ + 2);
    if (i == pos_ + 2) {
      pos_ += 2;
      return make(TokenKind::kErrorBadCharacter, begin);
    }
    const std::string_view word = sql_.substr(pos_ + 2, i - pos_ - 2);
    if (at(i) == '.' && (lexerWordEquals(word, "session") || lexerWordEquals(word, "global") ||
                         lexerWordEquals(word, "local"))) {
      const size_t j = skipWordChars(i + 1);
      if (j > i + 1) i = j;
    }
    pos_ = i;
    return make(TokenKind::kSystemVariable, begin);
  }
  const char next = at(pos_ + 1);
  if (next == '\'' || next == '"' || next == '`') {
    Token quoted = lexQuoted(begin, pos_ + 1, next == '`' ? TokenKind::kQuotedIdentifier
                                                          : TokenKind::kString);
    if (!quoted.isError()) quoted.kind = TokenKind::kUserVariable;
    return quoted;
  }
  size_t i = pos_ + 1;
  for (size_t j = skipWordChars(i); j > i || at(i) == '.'; j = skipWordChars(i)) i = j > i ? j : i + 1;
  if (i == pos_ + 1) {
    ++pos_;
    return make(TokenKind::kErrorBadCharacter, begin);
  }
  pos_ = i;
  return make(TokenKind::kUserVariable, begin);
}

Token Lexer::lexOperator(size_t begin) {
  auto at = [&](size_t i) { return i < sql_.size() ? sql_[i] : '\0'; };
  const char c = sql_[pos_];
  const char n = at(pos_ + 1);
  auto take = [&](size_t length, TokenKind kind) {
    pos_ += length;
    return make(kind, begin);
  };
  switch (c) {
    case '=': return take(1, TokenKind::kEquals);
    case '<':
      if (n == '=' && at(pos_ + 2) == '>') return take(3, TokenKind::kNullSafeEquals);
      if (n == '=') return take(2, TokenKind::kLessEquals);
      if (n == '>') return take(2, TokenKind::kNotEquals);
      if (n == '<') return take(2, TokenKind::kShiftLeft);
      return take(1, TokenKind::kLess);
    case '>':
      if (n == '=') return take(2, TokenKind::kGreaterEquals);
      if (n == '>') return take(2, TokenKind::kShiftRight);
      return take(1, TokenKind::kGreater);
    case '!': return n == '=' ? take(2, TokenKind::kNotEquals) : take(1, TokenKind::kBang);
    case '+': return take(1, TokenKind::kPlus);
    case '-':
      // "--" then whitespace or a control character (MariaDB: my_isspace ||
      // my_iscntrl, so also DEL and latin1's 0xA0) or the end of the input.
      if (n == '-' && (pos_ + 2 >= sql_.size() || static_cast<unsigned char>(at(pos_ + 2)) <= ' ' ||
                       at(pos_ + 2) == '\x7F' || (latin1_ && at(pos_ + 2) == '\xA0'))) {
        return lexLineComment(begin);
      }
      if (n == '>') return at(pos_ + 2) == '>' ? take(3, TokenKind::kDoubleArrow)
                                               : take(2, TokenKind::kArrow);
      return take(1, TokenKind::kMinus);
    case '*':
      if (n == '/' && in_version_comment_) {
        in_version_comment_ = false;
        return take(2, TokenKind::kVersionCommentEnd);
      }
      return take(1, TokenKind::kStar);
    case '/': return lexSlashOrComment(begin);
    case '%': return take(1, TokenKind::kPercent);
    case '&': return n == '&' ? take(2, TokenKind::kAndAnd) : take(1, TokenKind::kAmpersand);
    case '|':
      if (n != '|') return take(1, TokenKind::kPipe);
      return take(2, dialect_.pipes_as_concat ? TokenKind::kConcat : TokenKind::kOrOr);
    case '^': return take(1, TokenKind::kCaret);
    case '~': return take(1, TokenKind::kTilde);
    case ':': return n == '=' ? take(2, TokenKind::kAssign) : take(1, TokenKind::kErrorBadCharacter);
    case '.': return take(1, TokenKind::kDot);
    case ',': return take(1, TokenKind::kComma);
    case ';': return take(1, TokenKind::kSemicolon);
    case '(': return take(1, TokenKind::kLeftParen);
    case ')': return take(1, TokenKind::kRightParen);
    case '?': return take(1, TokenKind::kPlaceholder);
    default: return take(1, TokenKind::kErrorBadCharacter);
  }
}

void tokenizeInto(std::string_view sql, const Dialect& dialect, std::vector<Token>& out) {
  out.clear();
  out.reserve(sql.size() / 4 + 8);
  Lexer lexer(sql, dialect);
  for (;;) {
    Token token = lexer.nextSignificant();
    out.push_back(token);
    if (token.kind == TokenKind::kEnd) return;
  }
}

std::vector<Token> tokenize(std::string_view sql, const Dialect& dialect) {
  std::vector<Token> tokens;
  tokenizeInto(sql, dialect, tokens);
  return tokens;
}

uint64_t countTokens(std::string_view sql, uint64_t limit, const Dialect& dialect) {
  Lexer lexer(sql, dialect);
  uint64_t n = 0;
  while (n <= limit && lexer.nextSignificant().kind != TokenKind::kEnd) ++n;
  return n;
}

std::string_view tokenKindName(TokenKind kind) {
  static constexpr std::array<std::string_view, 48> kNames = {
      "End", "Whitespace", "Comment", "Hint", "VersionCommentBegin", "VersionCommentEnd",
      "Identifier", "QuotedIdentifier", "Integer", "Decimal", "Float", "String", "HexString",
      "BitString", "Placeholder", "UserVariable", "SystemVariable", "=", "<=>", "<>", "<", "<=",
      ">", ">=", "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "~", "!", "&&", "||", ":=",
      "->", "->>", ".", ",", ";", "(", ")", "Concat", "ErrorUnterminatedString"};
  static constexpr std::array<std::string_view, 4> kErrorNames = {
      "ErrorUnterminatedComment", "ErrorUnterminatedQuotedIdentifier", "ErrorBadCharacter",
      "ErrorBadLiteral"};
  auto index = static_cast<size_t>(kind);
  if (index < kNames.size()) return kNames[index];
  index -= kNames.size();
  return index < kErrorNames.size() ? kErrorNames[index] : "?";
}

std::string unquoteIdentifier(std::string_view text) {
  if (text.size() < 2 || (text.front() != '`' && text.front() != '"' && text.front() != '[')) {
    return std::string(text);
  }
  const char quote = text.front() == '[' ? ']' : text.front();
  std::string out;
  out.reserve(text.size() - 2);
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    out.push_back(text[i]);
    if (text[i] == quote && text[i + 1] == quote) ++i;
  }
  return out;
}

namespace {

// Appends the decoded body of one string token ('..', "..", _cs'..', N'..').
// Like MariaDB's my_unescape(): whole multi-byte characters are copied first.
void appendStringBody(std::string_view token, const Dialect& dialect, std::string& out) {
  const size_t open = token.find_first_of("'\"");
  if (open == std::string_view::npos || token.size() < open + 2) return;
  const char quote = token[open];
  const std::string_view body = token.substr(open + 1, token.size() - open - 2);
  const bool multi_byte = needsMultiByteLexing(dialect.charset);
  const auto* data = reinterpret_cast<const unsigned char*>(body.data());
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    size_t length = 0;
    if (multi_byte && static_cast<unsigned char>(c) >= 0x80 &&
        (length = mbCharLength(dialect.charset, data + i, data + body.size())) > 1) {
      out.append(body.substr(i, length));
      i += length - 1;
    } else if (c == quote && i + 1 < body.size() && body[i + 1] == quote) {
      out.push_back(quote);
      ++i;
    } else if (c == '\\' && i + 1 < body.size() && !dialect.no_backslash_escapes) {
      const char e = body[++i];
      switch (e) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case 'b': out.push_back('\b'); break;
        case '0': out.push_back('\0'); break;
        case 'Z': out.push_back('\x1a'); break;
        case '%': case '_': out.push_back('\\'); out.push_back(e); break;
        default: out.push_back(e); break;
      }
    } else {
      out.push_back(c);
    }
  }
}

}  // namespace

std::string unquoteString(std::string_view text, const Dialect& dialect) {
  // A literal's text may hold several adjacent strings ('a' 'b'), a charset
  // introducer (_utf8mb4 'x') or a type word (DATE '2024-01-01'): the value
  // is the concatenation of every string token in it.
  std::string out;
  out.reserve(text.size());
  bool any = false;
  Lexer lexer(text, dialect);
  for (Token t = lexer.nextSignificant(); !t.is(TokenKind::kEnd); t = lexer.nextSignificant()) {
    if (!t.is(TokenKind::kString)) continue;
    appendStringBody(t.text(text), dialect, out);
    any = true;
  }
  return any ? out : std::string(text);
}

bool tokenIsWord(const Token& t, std::string_view sql, std::string_view upper_word) {
  if (t.kind != TokenKind::kIdentifier) return false;
  std::string_view text = t.text(sql);
  if (text.size() != upper_word.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    if (c != upper_word[i]) return false;
  }
  return true;
}

}  // namespace sp::parser
