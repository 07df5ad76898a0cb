// Hand-written MySQL lexer. A Token is {kind, keyword, begin, end} pointing
// into the query text: nothing is copied. The lexer never throws; malformed
// input produces explicit error kinds and lexing continues (or ends) from
// there, so callers decide how to report it.
//
// MySQL specifics handled here rather than in the parser:
//  - versioned comments as MariaDB 10.11 reads them (sql_lex.cc): `/*!`
//    and `/*M!` followed by fewer than 5 digits, or by a 5/6-digit version
//    <= Dialect::server_version (MySQL-only versions 50700..99999 after `/*!`
//    are skipped), are executed: their content is lexed as normal SQL and
//    only the markers become kVersionCommentBegin/End. Other versions are
//    comments (kComment) that may hold one nested `/* */`.
//  - `/*+ ... */` optimizer hints are comments for MariaDB (kHint).
//  - `-- ` starts a comment only when followed by whitespace/control or end
//    of input (`1--1` is 1 - -1).
//  - charset introducers (_utf8mb4'x', N'x') are part of the string token.
//  - the Dialect decides string escapes, "x" and [x] identifiers, `||`, and
//    how multi-byte characters of the client charset are stepped over.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parser/dialect.hpp"
#include "parser/keywords.hpp"

namespace sp::parser {

enum class TokenKind : uint8_t {
  kEnd,                 // end of input (begin == end == sql.size())
  kWhitespace,
  kComment,             // /* */, -- , #
  kHint,                // /*+ ... */ optimizer hint (treated as a comment)
  kVersionCommentBegin, // "/*!", "/*!50110", "/*M!100100"
  kVersionCommentEnd,   // the "*/" closing a version comment
  kIdentifier,          // bare word; Token::keyword says whether it spells a keyword
  kQuotedIdentifier,    // `name` (`` inside is an escaped backtick); "name" (ANSI_QUOTES), [name] (MSSQL)
  kInteger,             // 42
  kDecimal,             // 4.2  .5  3.
  kFloat,               // 1e10  1.5E-3
  kString,              // 'x' "x" _utf8mb4'x' N'x'
  kHexString,           // X'0A'  0x0a
  kBitString,           // b'01'  0b01
  kPlaceholder,         // ?
  kUserVariable,        // @name  @'name'  @`name`
  kSystemVariable,      // @@name  @@session.name  @@global.name  @@local.name
  // Operators and punctuation.
  kEquals, kNullSafeEquals, kNotEquals, kLess, kLessEquals, kGreater, kGreaterEquals,
  kPlus, kMinus, kStar, kSlash, kPercent, kShiftLeft, kShiftRight,
  kAmpersand, kPipe, kCaret, kTilde, kBang, kAndAnd, kOrOr, kAssign,
  kArrow, kDoubleArrow,  // JSON -> and ->>
  kDot, kComma, kSemicolon, kLeftParen, kRightParen,
  kConcat,               // || under PIPES_AS_CONCAT (otherwise kOrOr)
  // Errors: the token spans the offending text.
  kErrorUnterminatedString,
  kErrorUnterminatedComment,            // also an unclosed version comment
  kErrorUnterminatedQuotedIdentifier,
  kErrorBadCharacter,
  kErrorBadLiteral,                     // X'1' (odd digits), X'zz', b'2'
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  Keyword keyword = Keyword::kNone;  // only for kIdentifier
  uint32_t begin = 0;
  uint32_t end = 0;

  std::string_view text(std::string_view sql) const { return sql.substr(begin, end - begin); }
  bool is(TokenKind k) const { return kind == k; }
  bool isKeyword(Keyword k) const { return kind == TokenKind::kIdentifier && keyword == k; }
  bool isError() const { return kind >= TokenKind::kErrorUnterminatedString; }
  // Whitespace, comments, hints and version-comment markers are not significant.
  bool isSignificant() const {
    return kind == TokenKind::kEnd || kind > TokenKind::kVersionCommentEnd;
  }
};

class Lexer {
 public:
  explicit Lexer(std::string_view sql, const Dialect& dialect = {});

  // Every token, including whitespace and comments. Returns kEnd forever
  // once the input is exhausted.
  Token next();
  // Skips whitespace, comments, hints and version-comment markers.
  Token nextSignificant();

 private:
  Token make(TokenKind kind, size_t begin) const;
  Token lexSlashOrComment(size_t begin);
  Token lexBlockComment(size_t begin, int nesting);
  Token lexLineComment(size_t begin);
  Token lexNumber(size_t begin);
  Token lexWord(size_t begin);
  Token lexQuoted(size_t begin, size_t quote_pos, TokenKind kind);
  Token lexQuotedDigits(size_t begin, bool hex);
  Token lexVariable(size_t begin);
  Token lexOperator(size_t begin);
  bool canStartDecimalAfterDot() const;
  size_t skipWordChars(size_t i) const;
  size_t skipComment(size_t i, int nesting) const;  // npos when unterminated

  std::string_view sql_;
  Dialect dialect_;
  bool multi_byte_ = false;  // needsMultiByteLexing(dialect_.charset)
  bool latin1_ = false;      // 0xA0 is whitespace
  size_t pos_ = 0;
  bool in_version_comment_ = false;
  TokenKind last_significant_ = TokenKind::kEnd;
};

// All significant tokens, terminated by one kEnd token.
std::vector<Token> tokenize(std::string_view sql, const Dialect& dialect = {});
// The same into `out` (cleared first; its capacity is reused).
void tokenizeInto(std::string_view sql, const Dialect& dialect, std::vector<Token>& out);

// Lexers started on this thread so far: tests count the passes over a
// statement (parser/analysis.hpp: a plan-cache hit lexes once).
uint64_t lexerRuns();
// How many significant tokens `sql` has, counting no further than `limit + 1`;
// memory O(1), so a 20 MB statement can be measured before anything holds
// its tokens.
uint64_t countTokens(std::string_view sql, uint64_t limit, const Dialect& dialect = {});

std::string_view tokenKindName(TokenKind kind);

// Value of a kQuotedIdentifier (`a``b` -> a`b, "a""b" -> a"b, [a]]b] -> a]b)
// or kIdentifier (unchanged).
std::string unquoteIdentifier(std::string_view text);
// Whether `t` is the bare word `upper_word` (given in upper case), in any case.
bool tokenIsWord(const Token& t, std::string_view sql, std::string_view upper_word);
// Content of a kString token: introducer dropped, quotes stripped, doubled
// quotes and backslash escapes resolved (\n, \t, \0, \Z, \\, \', \", \b, \r;
// \% and \_ keep their backslash as MySQL does). Also accepts the text of a
// kString literal expression: adjacent strings ('a' 'b' -> "ab") and prefixes
// (_utf8mb4 'x', DATE '2024-01-01') are handled. Text without any string
// token is returned unchanged.
std::string unquoteString(std::string_view text, const Dialect& dialect = {});

}  // namespace sp::parser
