// Primary expressions: literals, variables, column references, function
// calls and the special forms (CASE, CAST, CONVERT, INTERVAL, EXISTS,
// subqueries, row constructors).
#include <array>
#include <cctype>

#include "parser/parser_impl.hpp"

namespace sp::parser::detail {
namespace {

// Functions MySQL lets you call without parentheses.
constexpr std::array<std::string_view, 9> kNiladicFunctions = {
    "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "CURRENT_USER", "LOCALTIME",
    "LOCALTIMESTAMP", "UTC_DATE", "UTC_TIME", "UTC_TIMESTAMP"};

constexpr std::array<std::string_view, 20> kIntervalUnits = {
    "MICROSECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR",
    "SECOND_MICROSECOND", "MINUTE_MICROSECOND", "MINUTE_SECOND", "HOUR_MICROSECOND",
    "HOUR_SECOND", "HOUR_MINUTE", "DAY_MICROSECOND", "DAY_SECOND", "DAY_MINUTE", "DAY_HOUR",
    "YEAR_MONTH"};

// Charset introducers written with a space before the string (_utf8mb4 'x');
// without a space the lexer already made them part of the string token.
constexpr std::array<std::string_view, 9> kIntroducers = {
    "_UTF8MB4", "_UTF8MB3", "_UTF8", "_LATIN1", "_BINARY", "_ASCII", "_UTF16", "_UTF32", "_UCS2"};

// Reserved words that are still function names when followed by '('.
bool isReservedFunctionName(Keyword k) {
  switch (k) {
    case Keyword::kLEFT: case Keyword::kRIGHT: case Keyword::kREPLACE: case Keyword::kINSERT:
    case Keyword::kVALUES: case Keyword::kMOD: case Keyword::kDEFAULT: case Keyword::kCHARACTER:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool Parser::peekStartsQuery(size_t ahead) const {
  size_t i = ahead;
  while (peekIs(TokenKind::kLeftParen, i)) ++i;
  return peekKeyword(Keyword::kSELECT, i) || peekKeyword(Keyword::kWITH, i);
}

ExprPtr Parser::parsePrimary() {
  if (!withinNodeBudget()) return nullptr;
  const Token& token = peek();
  switch (token.kind) {
    case TokenKind::kInteger: case TokenKind::kDecimal: case TokenKind::kFloat:
    case TokenKind::kString: case TokenKind::kHexString: case TokenKind::kBitString:
    case TokenKind::kPlaceholder:
      return parseLiteral();
    case TokenKind::kUserVariable: case TokenKind::kSystemVariable: {
      advance();
      ExprPtr expr = makeExpr(token.is(TokenKind::kUserVariable) ? ExprKind::kUserVariable
                                                                 : ExprKind::kSystemVariable,
                              token.begin);
      expr->name = token.text(sql_);
      return expr;
    }
    case TokenKind::kLeftParen:
      return parseParenthesized();
    case TokenKind::kIdentifier: case TokenKind::kQuotedIdentifier:
      return parseWord();
    default:
      return fail("expression"), nullptr;
  }
}

ExprPtr Parser::parseLiteral() {
  const Token& token = advance();
  ExprPtr expr = makeExpr(ExprKind::kLiteral, token.begin);
  switch (token.kind) {
    case TokenKind::kInteger: expr->literal_kind = LiteralKind::kInteger; break;
    case TokenKind::kDecimal: expr->literal_kind = LiteralKind::kDecimal; break;
    case TokenKind::kFloat: expr->literal_kind = LiteralKind::kFloat; break;
    case TokenKind::kHexString: expr->literal_kind = LiteralKind::kHex; break;
    case TokenKind::kBitString: expr->literal_kind = LiteralKind::kBit; break;
    case TokenKind::kPlaceholder:
      expr->literal_kind = LiteralKind::kPlaceholder;
      expr->placeholder_index = placeholders_++;
      break;
    default:
      expr->literal_kind = LiteralKind::kString;
      // 'a' 'b' is one string literal in MySQL.
      while (accept(TokenKind::kString)) expr->range.end = lastEnd();
      break;
  }
  return expr;
}

ExprPtr Parser::parseParenthesized() {
  DepthGuard guard(*this);
  if (!guard.ok()) return nullptr;
  const uint32_t begin = advance().begin;  // '('
  if (peekStartsQuery()) {
    SelectPtr query = parseQuery();
    if (!query || !expect(TokenKind::kRightParen, "')' closing subquery")) return nullptr;
    ExprPtr expr = makeExpr(ExprKind::kSubquery, begin);
    expr->subquery = std::move(query);
    return expr;
  }
  ExprPtr first = parseExpr();
  if (!first) return nullptr;
  if (!peekIs(TokenKind::kComma)) {
    if (!expect(TokenKind::kRightParen, "')'")) return nullptr;
    first->range = SourceRange{begin, lastEnd()};  // keep the parentheses in the text
    return first;
  }
  auto row = newExpr();
  row->kind = ExprKind::kRow;
  row->args.push_back(std::move(first));
  while (accept(TokenKind::kComma)) {
    ExprPtr item = parseExpr();
    if (!item) return nullptr;
    row->args.push_back(std::move(item));
  }
  if (!expect(TokenKind::kRightParen, "')' closing row")) return nullptr;
  row->range = SourceRange{begin, lastEnd()};
  return row;
}

ExprPtr Parser::parseWord() {
  const Token& token = peek();
  const bool call = peekIs(TokenKind::kLeftParen, 1);
  switch (token.keyword) {
    case Keyword::kNULL: case Keyword::kTRUE: case Keyword::kFALSE: {
      advance();
      ExprPtr expr = makeExpr(ExprKind::kLiteral, token.begin);
      expr->literal_kind = token.keyword == Keyword::kNULL   ? LiteralKind::kNull
                           : token.keyword == Keyword::kTRUE ? LiteralKind::kTrue
                                                             : LiteralKind::kFalse;
      return expr;
    }
    case Keyword::kDEFAULT:
      if (call) break;
      advance();
      return makeExpr(ExprKind::kDefault, token.begin);
    case Keyword::kCASE: return parseCase();
    case Keyword::kCAST: if (call) return parseCast(); break;
    case Keyword::kCONVERT: if (call) return parseConvert(); break;
    case Keyword::kINTERVAL: return parseInterval();
    case Keyword::kEXISTS: return parseExists(token.begin, false);
    case Keyword::kROW: if (call) return parseRowConstructor(); break;
    default: break;
  }
  if (peekPrefixedString()) {
    advance();
    ExprPtr literal = parseLiteral();
    literal->range.begin = token.begin;
    return literal;
  }
  if (token.is(TokenKind::kIdentifier) && call &&
      (!isReservedKeyword(token.keyword) || isReservedFunctionName(token.keyword))) {
    return parseFunction();
  }
  if (token.is(TokenKind::kIdentifier) && !call) {
    for (std::string_view name : kNiladicFunctions) {
      if (!peekWord(name)) continue;
      advance();
      ExprPtr expr = makeExpr(ExprKind::kFunction, token.begin);
      expr->name = token.text(sql_);
      return expr;
    }
  }
  if (!isNameToken(token)) return fail("expression"), nullptr;
  return parseColumnRef();
}

// DATE '2024-01-01', TIMESTAMP '...', _utf8mb4 'x': one string literal whose
// text includes the prefix (unquoteString() gives the content).
bool Parser::peekPrefixedString() const {
  if (!peekIs(TokenKind::kIdentifier) || !peekIs(TokenKind::kString, 1)) return false;
  bool prefix = peekWord("DATE") || peekWord("TIME") || peekWord("TIMESTAMP");
  for (std::string_view name : kIntroducers) prefix = prefix || peekWord(name);
  return prefix;
}

// ROW(a, b) (also ROW(a)): always a kRow node whose range starts at ROW.
ExprPtr Parser::parseRowConstructor() {
  const uint32_t begin = advance().begin;
  ExprPtr row = parseParenthesized();
  if (!row) return nullptr;
  row->range.begin = begin;
  if (row->kind == ExprKind::kRow) return row;
  ExprPtr single = makeExpr(ExprKind::kRow, begin);
  single->args.push_back(std::move(row));
  return single;
}

ExprPtr Parser::parseColumnRef() {
  const uint32_t begin = peek().begin;
  Identifier parts[3];
  size_t count = 0;
  parts[count++] = makeIdentifier(advance());
  // After a dot any word is a name: t.order, t.key.
  while (count < 3 && peekIs(TokenKind::kDot) &&
         (peekIs(TokenKind::kIdentifier, 1) || peekIs(TokenKind::kQuotedIdentifier, 1))) {
    advance();
    parts[count++] = makeIdentifier(advance());
  }
  if (peekIs(TokenKind::kDot)) {
    advance();
    return fail("column name"), nullptr;
  }
  ExprPtr expr = makeExpr(ExprKind::kColumn, begin);
  expr->column.column = parts[count - 1];
  if (count >= 2) expr->column.table = parts[count - 2];
  if (count == 3) expr->column.db = parts[0];
  return expr;
}

ExprPtr Parser::parseFunction() {
  const Token& name = advance();
  advance();  // '('
  ExprPtr expr = newExpr();
  expr->kind = ExprKind::kFunction;
  expr->name = name.text(sql_);
  if (!parseSpecialFunctionArgs(*expr) && !failed() && !parseFunctionArgs(*expr)) return nullptr;
  if (failed()) return nullptr;
  if (peekWord("SEPARATOR") && accept(TokenKind::kIdentifier)) {
    if (!peekIs(TokenKind::kString)) return fail("separator string"), nullptr;
    expr->separator = parseLiteral();
  }
  if (!expect(TokenKind::kRightParen, "')' closing function call")) return nullptr;
  if (peekWord("OVER") && (peekIs(TokenKind::kLeftParen, 1) || isNameToken(peek(1)))) {
    advance();
    expr->window = true;
    windows_ = true;
    if (peekIs(TokenKind::kLeftParen)) {
      if (!parseWindowSpec(expr->window_partition, expr->window_order)) return nullptr;
    } else {
      advance();  // a window named in the WINDOW clause
    }
  }
  expr->range = SourceRange{name.begin, lastEnd()};
  return expr;
}

bool Parser::parseWindowSpec(std::vector<ExprPtr>& partition, std::vector<OrderItem>& order) {
  if (!expect(TokenKind::kLeftParen, "'(' opening a window specification")) return false;
  if (isNameToken(peek()) && !peekWord("PARTITION") && !peekWord("ORDER") && !peekWord("ROWS") &&
      !peekWord("RANGE")) {
    advance();  // based on a named window
  }
  if (peekWord("PARTITION") && peekKeyword(Keyword::kBY, 1)) {
    pos_ += 2;
    do {
      ExprPtr e = parseExpr();
      if (!e) return false;
      partition.push_back(std::move(e));
    } while (accept(TokenKind::kComma));
  }
  if (peekKeyword(Keyword::kORDER) && peekKeyword(Keyword::kBY, 1)) {
    pos_ += 2;
    if (!parseOrderList(order)) return false;
  }
  // The frame (ROWS | RANGE BETWEEN .. AND ..) names no columns: kept as text.
  if (!skipToClosingParen("window frame")) return false;
  return expect(TokenKind::kRightParen, "')' closing a window specification");
}

// SQL-standard call syntaxes with keywords inside the parentheses. The
// keywords (unit, LEADING/TRAILING/BOTH) stay only in the text; args hold the
// expressions in source order. Returns false (without an error) when the
// call is an ordinary one; true when handled (errors, if any, recorded).
bool Parser::parseSpecialFunctionArgs(Expr& function) {
  auto pushArg = [&](ExprPtr arg) {
    if (!arg) return false;
    function.args.push_back(std::move(arg));
    return true;
  };
  const std::string_view name = function.name;
  auto is = [&](std::string_view upper) {
    if (name.size() != upper.size()) return false;
    for (size_t i = 0; i < name.size(); ++i) {
      if (static_cast<char>(std::toupper(static_cast<unsigned char>(name[i]))) != upper[i]) return false;
    }
    return true;
  };
  if (is("EXTRACT") && peekIs(TokenKind::kIdentifier) && peekKeyword(Keyword::kFROM, 1)) {
    pos_ += 2;  // unit FROM
    pushArg(parseExpr());
    return true;
  }
  if (is("POSITION")) {  // POSITION(substr IN str): IN is not a predicate here
    if (pushArg(parseBinaryLevel(0)) && expectKeyword(Keyword::kIN)) pushArg(parseExpr());
    return true;
  }
  if (is("TRIM")) {  // TRIM([LEADING|TRAILING|BOTH] [remstr] FROM str) or TRIM(str)
    const bool side = peekWord("LEADING") || peekWord("TRAILING") || peekWord("BOTH");
    if (side) advance();
    if (side && acceptKeyword(Keyword::kFROM)) {
      pushArg(parseExpr());
    } else if (pushArg(parseExpr())) {
      if (acceptKeyword(Keyword::kFROM)) pushArg(parseExpr());
      else if (side) fail("FROM");
    }
    return true;
  }
  if (is("SUBSTRING") || is("SUBSTR")) {  // (str FROM pos [FOR len]) or (str, pos[, len])
    if (!pushArg(parseExpr())) return true;
    if (acceptKeyword(Keyword::kFROM)) {
      if (pushArg(parseExpr()) && acceptKeyword(Keyword::kFOR)) pushArg(parseExpr());
    } else {
      while (accept(TokenKind::kComma) && pushArg(parseExpr())) {
      }
    }
    return true;
  }
  return false;
}

bool Parser::parseFunctionArgs(Expr& function) {
  if (peekIs(TokenKind::kStar) && peekIs(TokenKind::kRightParen, 1)) {
    advance();
    function.star = true;  // COUNT(*)
    return true;
  }
  if (acceptKeyword(Keyword::kDISTINCT)) function.distinct = true;
  else acceptKeyword(Keyword::kALL);
  if (peekIs(TokenKind::kRightParen)) return !function.distinct || fail("expression");
  do {
    ExprPtr arg = parseExpr();
    if (!arg) return false;
    function.args.push_back(std::move(arg));
  } while (accept(TokenKind::kComma));
  // GROUP_CONCAT(x ORDER BY y SEPARATOR ',')
  if (peekKeyword(Keyword::kORDER) && peekKeyword(Keyword::kBY, 1)) {
    pos_ += 2;
    return parseOrderList(function.order_by);
  }
  return true;
}

ExprPtr Parser::parseCase() {
  const uint32_t begin = advance().begin;
  auto expr = newExpr();
  expr->kind = ExprKind::kCase;
  if (!peekKeyword(Keyword::kWHEN) && !(expr->case_operand = parseExpr())) return nullptr;
  if (!peekKeyword(Keyword::kWHEN)) return fail("WHEN"), nullptr;
  while (acceptKeyword(Keyword::kWHEN)) {
    ExprPtr when = parseExpr();
    if (!when || !expectKeyword(Keyword::kTHEN)) return nullptr;
    ExprPtr then = parseExpr();
    if (!then) return nullptr;
    expr->args.push_back(std::move(when));
    expr->args.push_back(std::move(then));
  }
  if (acceptKeyword(Keyword::kELSE) && !(expr->case_else = parseExpr())) return nullptr;
  if (!expectKeyword(Keyword::kEND)) return nullptr;
  expr->range = SourceRange{begin, lastEnd()};
  return expr;
}

// Advances to the ')' that closes the current parentheses (nested pairs
// skipped, placeholders counted), leaving it unconsumed; false (with an error naming `what`) on a
// lexer error token.
bool Parser::skipToClosingParen(std::string_view what) {
  int depth = 0;
  while (!peekIs(TokenKind::kEnd) && !(depth == 0 && peekIs(TokenKind::kRightParen))) {
    if (peek().isError()) return fail(what);
    if (peekIs(TokenKind::kLeftParen)) ++depth;
    if (peekIs(TokenKind::kRightParen)) --depth;
    // A `?` skipped here still takes its place among the statement's
    // parameters (ROWS BETWEEN ? PRECEDING ..., and the plan cache turns the
    // literals of DECIMAL(10,2) into `?`): the placeholders after it must keep
    // their numbers.
    if (peekIs(TokenKind::kPlaceholder)) ++placeholders_;
    advance();
  }
  return true;
}

// Type text of CAST/CONVERT: everything up to the matching ')' (CHAR(10),
// DECIMAL(10,2), UNSIGNED INTEGER, CHAR CHARACTER SET utf8mb4).
bool Parser::parseTypeText(Expr& cast) {
  const uint32_t begin = peek().begin;
  if (!skipToClosingParen("type")) return false;
  if (lastEnd() <= begin) return fail("type");
  cast.name = sql_.substr(begin, lastEnd() - begin);
  return true;
}

ExprPtr Parser::parseCast() {
  const uint32_t begin = advance().begin;
  advance();  // '('
  auto expr = newExpr();
  expr->kind = ExprKind::kCast;
  ExprPtr value = parseExpr();
  if (!value || !expectKeyword(Keyword::kAS) || !parseTypeText(*expr) ||
      !expect(TokenKind::kRightParen, "')' closing CAST")) {
    return nullptr;
  }
  expr->args.push_back(std::move(value));
  expr->range = SourceRange{begin, lastEnd()};
  return expr;
}

ExprPtr Parser::parseConvert() {
  const uint32_t begin = advance().begin;
  advance();  // '('
  auto expr = newExpr();
  expr->kind = ExprKind::kCast;
  ExprPtr value = parseExpr();
  if (!value) return nullptr;
  if (acceptKeyword(Keyword::kUSING)) {
    expr->using_charset = true;
    if (!isNameToken(peek())) return fail("character set name"), nullptr;
    expr->name = advance().text(sql_);
  } else if (!expect(TokenKind::kComma, "',' or USING") || !parseTypeText(*expr)) {
    return nullptr;
  }
  if (!expect(TokenKind::kRightParen, "')' closing CONVERT")) return nullptr;
  expr->args.push_back(std::move(value));
  expr->range = SourceRange{begin, lastEnd()};
  return expr;
}

ExprPtr Parser::parseInterval() {
  const uint32_t begin = advance().begin;
  ExprPtr amount = parseExpr();
  if (!amount) return nullptr;
  bool known_unit = false;
  for (std::string_view unit : kIntervalUnits) known_unit = known_unit || peekWord(unit);
  if (!known_unit) return fail("interval unit (DAY, MONTH, ...)"), nullptr;
  const Token& unit = advance();
  ExprPtr expr = makeExpr(ExprKind::kInterval, begin);
  expr->name = unit.text(sql_);
  expr->args.push_back(std::move(amount));
  return expr;
}

ExprPtr Parser::parseExists(uint32_t begin, bool negated) {
  advance();  // EXISTS
  if (!expect(TokenKind::kLeftParen, "'(' after EXISTS")) return nullptr;
  if (!peekStartsQuery()) return fail("subquery"), nullptr;
  SelectPtr query = parseQuery();
  if (!query || !expect(TokenKind::kRightParen, "')' closing subquery")) return nullptr;
  ExprPtr expr = makeExpr(ExprKind::kExists, begin);
  expr->negated = negated;
  expr->subquery = std::move(query);
  return expr;
}

}  // namespace sp::parser::detail
