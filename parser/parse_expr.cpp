// Expression grammar, lowest to highest precedence (MySQL order):
//   := ; OR || ; XOR ; AND && ; NOT ; comparison/IS/IN/BETWEEN/LIKE/REGEXP ;
//   | ; & ; << >> ; + - ; * / DIV % MOD ; ^ ; unary - + ~ ! BINARY ;
//   COLLATE / -> ->> ; primary.
#include <optional>

#include "parser/parser_impl.hpp"

namespace sp::parser::detail {

ExprPtr Parser::makeExpr(ExprKind kind, uint32_t begin) {
  auto expr = newExpr();
  expr->kind = kind;
  expr->range = SourceRange{begin, lastEnd()};
  return expr;
}

ExprPtr Parser::makeBinary(BinaryOp op, ExprPtr lhs, ExprPtr rhs) {
  auto expr = newExpr();
  expr->kind = ExprKind::kBinary;
  expr->binary_op = op;
  expr->range = SourceRange{lhs->range.begin, rhs->range.end};
  expr->args.push_back(std::move(lhs));
  expr->args.push_back(std::move(rhs));
  return expr;
}

ExprPtr Parser::parseExpr() {
  DepthGuard guard(*this);
  if (!guard.ok()) return nullptr;
  ExprPtr lhs = parseOr();
  if (lhs && lhs->kind == ExprKind::kUserVariable && accept(TokenKind::kAssign)) {
    ExprPtr rhs = parseExpr();  // right-associative: @a := @b := 1
    if (!rhs) return nullptr;
    return makeBinary(BinaryOp::kAssign, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseOr() {
  ExprPtr lhs = parseXor();
  while (lhs && (peekKeyword(Keyword::kOR) || peekIs(TokenKind::kOrOr))) {
    advance();
    ExprPtr rhs = parseXor();
    if (!rhs) return nullptr;
    lhs = makeBinary(BinaryOp::kOr, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseXor() {
  ExprPtr lhs = parseAnd();
  while (lhs && acceptKeyword(Keyword::kXOR)) {
    ExprPtr rhs = parseAnd();
    if (!rhs) return nullptr;
    lhs = makeBinary(BinaryOp::kXor, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseAnd() {
  ExprPtr lhs = parseNot();
  while (lhs && (peekKeyword(Keyword::kAND) || peekIs(TokenKind::kAndAnd))) {
    advance();
    ExprPtr rhs = parseNot();
    if (!rhs) return nullptr;
    lhs = makeBinary(BinaryOp::kAnd, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseNot() {
  // HIGH_NOT_PRECEDENCE: NOT binds like '!' (parseUnary).
  if (!peekKeyword(Keyword::kNOT) || dialect_.high_not_precedence) return parsePredicate();
  DepthGuard guard(*this);
  if (!guard.ok()) return nullptr;
  const uint32_t begin = advance().begin;
  if (peekKeyword(Keyword::kEXISTS)) return parseExists(begin, true);
  ExprPtr operand = parseNot();
  if (!operand) return nullptr;
  ExprPtr expr = makeExpr(ExprKind::kUnary, begin);
  expr->unary_op = UnaryOp::kNot;
  expr->args.push_back(std::move(operand));
  return expr;
}

namespace {

std::optional<BinaryOp> comparisonOp(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEquals: return BinaryOp::kEq;
    case TokenKind::kNullSafeEquals: return BinaryOp::kNullSafeEq;
    case TokenKind::kNotEquals: return BinaryOp::kNe;
    case TokenKind::kLess: return BinaryOp::kLt;
    case TokenKind::kLessEquals: return BinaryOp::kLe;
    case TokenKind::kGreater: return BinaryOp::kGt;
    case TokenKind::kGreaterEquals: return BinaryOp::kGe;
    default: return std::nullopt;
  }
}

// Binary operator levels between comparison and unary, lowest first.
constexpr int kBinaryLevels = 7;

std::optional<BinaryOp> binaryOpAt(int level, const Token& token) {
  switch (level) {
    case 0: if (token.is(TokenKind::kPipe)) return BinaryOp::kBitOr; break;
    case 1: if (token.is(TokenKind::kAmpersand)) return BinaryOp::kBitAnd; break;
    case 2:
      if (token.is(TokenKind::kShiftLeft)) return BinaryOp::kShiftLeft;
      if (token.is(TokenKind::kShiftRight)) return BinaryOp::kShiftRight;
      break;
    case 3:
      if (token.is(TokenKind::kPlus)) return BinaryOp::kAdd;
      if (token.is(TokenKind::kMinus)) return BinaryOp::kSub;
      break;
    case 4:
      if (token.is(TokenKind::kStar)) return BinaryOp::kMul;
      if (token.is(TokenKind::kSlash)) return BinaryOp::kDiv;
      if (token.is(TokenKind::kPercent) || token.isKeyword(Keyword::kMOD)) return BinaryOp::kMod;
      if (token.isKeyword(Keyword::kDIV)) return BinaryOp::kIntDiv;
      break;
    case 5: if (token.is(TokenKind::kCaret)) return BinaryOp::kBitXor; break;
    // PIPES_AS_CONCAT: MariaDB's MYSQL_CONCAT_SYM sits above '^' (2 ^ 1 || 1 = 9).
    case 6: if (token.is(TokenKind::kConcat)) return BinaryOp::kConcat; break;
    default: break;
  }
  return std::nullopt;
}

}  // namespace

ExprPtr Parser::parsePredicate() {
  ExprPtr lhs = parseBinaryLevel(0);
  while (lhs) {
    if (!withinNodeBudget()) return nullptr;  // x IS NULL IS NULL ... parses no new operand
    if (acceptKeyword(Keyword::kIS)) {
      lhs = parseIsTail(std::move(lhs));
      continue;
    }
    if (auto op = comparisonOp(peek().kind)) {
      advance();
      ExprPtr rhs = parseBinaryLevel(0);
      if (!rhs) return nullptr;
      lhs = makeBinary(*op, std::move(lhs), std::move(rhs));
      continue;
    }
    const bool negated = peekKeyword(Keyword::kNOT) &&
                         (peekKeyword(Keyword::kIN, 1) || peekKeyword(Keyword::kBETWEEN, 1) ||
                          peekKeyword(Keyword::kLIKE, 1) || peekKeyword(Keyword::kREGEXP, 1) ||
                          peekKeyword(Keyword::kRLIKE, 1));
    if (negated) advance();
    if (acceptKeyword(Keyword::kIN)) {
      lhs = parseInTail(std::move(lhs), negated);
    } else if (acceptKeyword(Keyword::kBETWEEN)) {
      lhs = parseBetweenTail(std::move(lhs), negated);
    } else if (acceptKeyword(Keyword::kLIKE)) {
      lhs = parseLikeTail(std::move(lhs), negated);
    } else if (acceptKeyword(Keyword::kREGEXP) || acceptKeyword(Keyword::kRLIKE)) {
      ExprPtr rhs = parseBinaryLevel(0);
      if (!rhs) return nullptr;
      lhs = makeBinary(BinaryOp::kRegexp, std::move(lhs), std::move(rhs));
      lhs->negated = negated;
    } else {
      break;
    }
  }
  return lhs;
}

// After IS: [NOT] NULL | TRUE | FALSE | UNKNOWN.
ExprPtr Parser::parseIsTail(ExprPtr lhs) {
  ExprPtr expr = makeExpr(ExprKind::kIsTest, lhs->range.begin);
  expr->negated = acceptKeyword(Keyword::kNOT);
  if (acceptKeyword(Keyword::kNULL)) expr->is_value = IsValue::kNull;
  else if (acceptKeyword(Keyword::kTRUE)) expr->is_value = IsValue::kTrue;
  else if (acceptKeyword(Keyword::kFALSE)) expr->is_value = IsValue::kFalse;
  else if (acceptKeyword(Keyword::kUNKNOWN)) expr->is_value = IsValue::kUnknown;
  else return fail("NULL, TRUE, FALSE or UNKNOWN"), nullptr;
  expr->range.end = lastEnd();
  expr->args.push_back(std::move(lhs));
  return expr;
}

// After BETWEEN: low AND high (both bit expressions, so AND is unambiguous).
ExprPtr Parser::parseBetweenTail(ExprPtr lhs, bool negated) {
  ExprPtr low = parseBinaryLevel(0);
  if (!low || !expectKeyword(Keyword::kAND)) return nullptr;
  ExprPtr high = parseBinaryLevel(0);
  if (!high) return nullptr;
  ExprPtr expr = makeExpr(ExprKind::kBetween, lhs->range.begin);
  expr->negated = negated;
  expr->args.push_back(std::move(lhs));
  expr->args.push_back(std::move(low));
  expr->args.push_back(std::move(high));
  return expr;
}

// After LIKE: pattern [ESCAPE char].
ExprPtr Parser::parseLikeTail(ExprPtr lhs, bool negated) {
  ExprPtr pattern = parseBinaryLevel(0);
  if (!pattern) return nullptr;
  ExprPtr escape;
  if (acceptKeyword(Keyword::kESCAPE) && !(escape = parsePrimary())) return nullptr;
  ExprPtr expr = makeExpr(ExprKind::kLike, lhs->range.begin);
  expr->negated = negated;
  expr->args.push_back(std::move(lhs));
  expr->args.push_back(std::move(pattern));
  if (escape) expr->args.push_back(std::move(escape));
  return expr;
}

ExprPtr Parser::parseInTail(ExprPtr lhs, bool negated) {
  if (!lhs || !expect(TokenKind::kLeftParen, "'(' after IN")) return nullptr;
  auto expr = newExpr();
  expr->kind = ExprKind::kIn;
  expr->negated = negated;
  expr->range.begin = lhs->range.begin;
  expr->args.push_back(std::move(lhs));
  if (peekStartsQuery()) {
    expr->subquery = parseQuery();
    if (!expr->subquery) return nullptr;
  } else {
    do {
      if (expr->args.size() > limits_.max_in_values) {
        return failTooComplex("statement too complex: more than " + std::to_string(limits_.max_in_values) +
                              " values in an IN list (limits.max_in_list_values)"),
               nullptr;
      }
      ExprPtr item = parseExpr();
      if (!item) return nullptr;
      expr->args.push_back(std::move(item));
    } while (accept(TokenKind::kComma));
  }
  if (!expect(TokenKind::kRightParen, "')' closing IN list")) return nullptr;
  expr->range.end = lastEnd();
  return expr;
}

ExprPtr Parser::parseBinaryLevel(int level) {
  // The || level exists only under PIPES_AS_CONCAT: no extra recursion per
  // operand otherwise.
  if (level == kBinaryLevels || (level == kBinaryLevels - 1 && !dialect_.pipes_as_concat)) {
    return parseUnary();
  }
  ExprPtr lhs = parseBinaryLevel(level + 1);
  while (lhs) {
    const auto op = binaryOpAt(level, peek());
    if (!op) break;
    advance();
    ExprPtr rhs = parseBinaryLevel(level + 1);
    if (!rhs) return nullptr;
    lhs = makeBinary(*op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseUnary() {
  const Token& token = peek();
  std::optional<UnaryOp> op;
  if (token.is(TokenKind::kMinus)) op = UnaryOp::kNegate;
  else if (token.is(TokenKind::kPlus)) op = UnaryOp::kPlus;
  else if (token.is(TokenKind::kTilde)) op = UnaryOp::kBitNot;
  else if (token.is(TokenKind::kBang)) op = UnaryOp::kBang;
  else if (token.isKeyword(Keyword::kBINARY)) op = UnaryOp::kBinary;  // BINARY x, BINARY(x)
  else if (token.isKeyword(Keyword::kNOT) && dialect_.high_not_precedence) {
    if (peekKeyword(Keyword::kEXISTS, 1)) {
      const uint32_t begin = advance().begin;
      return parseExists(begin, true);
    }
    op = UnaryOp::kNot;
  }
  if (!op) return parsePostfix();

  DepthGuard guard(*this);
  if (!guard.ok()) return nullptr;
  const uint32_t begin = advance().begin;
  const Token& next = peek();
  const bool number = next.is(TokenKind::kInteger) || next.is(TokenKind::kDecimal) ||
                      next.is(TokenKind::kFloat);
  if (*op == UnaryOp::kNegate && number && next.begin == begin + 1) {
    // -5 is a negative literal (text "-5"), not negate(5): simpler for the planner.
    ExprPtr literal = parseLiteral();
    literal->range.begin = begin;
    return literal;
  }
  ExprPtr operand = parseUnary();
  if (!operand) return nullptr;
  ExprPtr expr = makeExpr(ExprKind::kUnary, begin);
  expr->unary_op = *op;
  expr->args.push_back(std::move(operand));
  return expr;
}

ExprPtr Parser::parsePostfix() {
  ExprPtr expr = parsePrimary();
  while (expr) {
    if (!withinNodeBudget()) return nullptr;  // x COLLATE a COLLATE b ... likewise
    const uint32_t begin = expr->range.begin;
    if (acceptKeyword(Keyword::kCOLLATE)) {
      const Token& name = peek();
      if (!isNameToken(name) && !name.is(TokenKind::kString)) return fail("collation name"), nullptr;
      advance();
      ExprPtr collate = makeExpr(ExprKind::kCollate, begin);
      collate->name = name.text(sql_);
      collate->args.push_back(std::move(expr));
      expr = std::move(collate);
    } else if (peekIs(TokenKind::kArrow) || peekIs(TokenKind::kDoubleArrow)) {
      const BinaryOp op = advance().is(TokenKind::kArrow) ? BinaryOp::kJsonExtract
                                                          : BinaryOp::kJsonUnquote;
      if (!peekIs(TokenKind::kString)) return fail("JSON path string"), nullptr;
      ExprPtr path = parseLiteral();
      expr = makeBinary(op, std::move(expr), std::move(path));
    } else {
      break;
    }
  }
  return expr;
}

}  // namespace sp::parser::detail
