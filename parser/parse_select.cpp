// SELECT query blocks, UNION, and the clauses shared with UPDATE/DELETE
// (ORDER BY, LIMIT).
#include "parser/parser_impl.hpp"

namespace sp::parser::detail {

SelectPtr Parser::parseQuery() {
  DepthGuard guard(*this);
  if (!guard.ok()) return nullptr;
  if (peekKeyword(Keyword::kWITH)) {
    return failWith("WITH (common table expressions) is not supported"), nullptr;
  }
  bool parenthesized = false;
  SelectPtr first = parseQueryPrimary(parenthesized);
  if (!first) return nullptr;
  bool last_parenthesized = parenthesized;
  while (acceptKeyword(Keyword::kUNION)) {
    UnionBranch branch;
    branch.all = acceptKeyword(Keyword::kALL);
    if (!branch.all) acceptKeyword(Keyword::kDISTINCT);
    branch.select = parseQueryPrimary(last_parenthesized);
    if (!branch.select) return nullptr;
    first->unions.push_back(std::move(branch));
  }
  if (first->unions.empty()) return first;
  SelectStatement& last = *first->unions.back().select;
  if (!last_parenthesized) {
    // ORDER BY / LIMIT after an unparenthesised last branch apply to the union.
    first->union_order_by = std::move(last.order_by);
    last.order_by.clear();
    first->union_limit = std::move(last.limit);
    last.limit = Limit{};
  } else {
    if (peekKeyword(Keyword::kORDER)) {
      advance();
      if (!expectKeyword(Keyword::kBY) || !parseOrderList(first->union_order_by)) return nullptr;
    }
    if (peekKeyword(Keyword::kLIMIT) && !parseLimit(first->union_limit, true)) return nullptr;
  }
  first->range.end = lastEnd();
  return first;
}

SelectPtr Parser::parseQueryPrimary(bool& parenthesized) {
  parenthesized = peekIs(TokenKind::kLeftParen);
  if (!parenthesized) return parseSelectBlock();
  const uint32_t begin = advance().begin;
  SelectPtr inner = parseQuery();
  if (!inner || !expect(TokenKind::kRightParen, "')' closing query")) return nullptr;
  inner->range = SourceRange{begin, lastEnd()};
  return inner;
}

SelectPtr Parser::parseSelectBlock() {
  const uint32_t begin = peek().begin;
  if (!expectKeyword(Keyword::kSELECT)) return nullptr;
  auto select = std::make_unique<SelectStatement>();
  if (!parseSelectModifiers(*select)) return nullptr;
  do {
    SelectItem item;
    if (!parseSelectItem(item)) return nullptr;
    select->items.push_back(std::move(item));
  } while (accept(TokenKind::kComma));
  if (!parseInto(*select)) return nullptr;
  if (acceptKeyword(Keyword::kFROM)) {
    if (peekWord("DUAL")) advance();
    else if (!parseTableRefList(select->from)) return nullptr;
  }
  if (acceptKeyword(Keyword::kWHERE) && !(select->where = parseExpr())) return nullptr;
  if (!parseGroupBy(*select)) return nullptr;
  if (acceptKeyword(Keyword::kHAVING) && !(select->having = parseExpr())) return nullptr;
  if (peekWord("WINDOW") && isNameToken(peek(1)) && peekKeyword(Keyword::kAS, 2)) {
    windows_ = true;
    advance();
    do {
      if (!isNameToken(peek()) || !peekKeyword(Keyword::kAS, 1)) return fail("window name AS (...)"), nullptr;
      pos_ += 2;  // name AS
      if (!parseWindowSpec(select->window_partition, select->window_order)) return nullptr;
    } while (accept(TokenKind::kComma));
  }
  if (peekKeyword(Keyword::kORDER)) {
    advance();
    if (!expectKeyword(Keyword::kBY) || !parseOrderList(select->order_by)) return nullptr;
  }
  if (peekKeyword(Keyword::kLIMIT) && !parseLimit(select->limit, true)) return nullptr;
  if (!parseInto(*select) || !parseLocking(*select) || !parseInto(*select)) return nullptr;
  select->range = SourceRange{begin, lastEnd()};
  return select;
}

bool Parser::parseSelectModifiers(SelectStatement& select) {
  for (;;) {
    const Token& token = peek();
    switch (token.keyword) {
      case Keyword::kDISTINCT: case Keyword::kDISTINCTROW: select.distinct = true; break;
      case Keyword::kSQL_CALC_FOUND_ROWS: select.sql_calc_found_rows = true; break;
      case Keyword::kALL: case Keyword::kHIGH_PRIORITY: case Keyword::kSTRAIGHT_JOIN:
      case Keyword::kSQL_SMALL_RESULT: case Keyword::kSQL_BIG_RESULT:
      case Keyword::kSQL_BUFFER_RESULT: case Keyword::kSQL_CACHE: case Keyword::kSQL_NO_CACHE:
        break;
      default:
        return true;
    }
    if (!token.is(TokenKind::kIdentifier)) return true;
    advance();
  }
}

bool Parser::parseSelectItem(SelectItem& item) {
  const uint32_t begin = peek().begin;
  // *, t.*, db.t.*
  size_t names = 0;
  while ((peekIs(TokenKind::kIdentifier, names * 2) || peekIs(TokenKind::kQuotedIdentifier, names * 2)) &&
         peekIs(TokenKind::kDot, names * 2 + 1) && names < 2) {
    ++names;
  }
  if (peekIs(TokenKind::kStar, names * 2)) {
    Identifier parts[2];
    for (size_t i = 0; i < names; ++i) {
      parts[i] = makeIdentifier(advance());
      advance();  // '.'
    }
    advance();  // '*'
    item.expr = makeExpr(ExprKind::kStar, begin);
    if (names >= 1) item.expr->column.table = parts[names - 1];
    if (names == 2) item.expr->column.db = parts[0];
    item.range = item.expr->range;
    return true;
  }
  item.expr = parseExpr();
  if (!item.expr || !parseAlias(item.alias, true)) return false;
  item.range = SourceRange{begin, lastEnd()};
  return true;
}

// [AS] alias. Without AS only a non-reserved word, `quoted` name or (for
// select items) a string can be an alias.
bool Parser::parseAlias(Identifier& alias, bool allow_string) {
  const bool as = acceptKeyword(Keyword::kAS);
  const Token& token = peek();
  if (isNameToken(token) || (allow_string && token.is(TokenKind::kString))) {
    alias = makeIdentifier(advance());
    if (token.is(TokenKind::kString)) alias.value = token.text(sql_).substr(1, token.end - token.begin - 2);
    return true;
  }
  return !as || fail("alias");
}

bool Parser::parseInto(SelectStatement& select) {
  if (!peekKeyword(Keyword::kINTO)) return true;
  const uint32_t begin = advance().begin;
  if (peekWord("OUTFILE") || peekWord("DUMPFILE")) {
    advance();
    if (!expect(TokenKind::kString, "file name")) return false;
  } else {
    do {
      if (!peekIs(TokenKind::kUserVariable) && !isNameToken(peek())) return fail("variable");
      advance();
    } while (accept(TokenKind::kComma));
  }
  select.into = SourceRange{begin, lastEnd()};
  return true;
}

bool Parser::parseGroupBy(SelectStatement& select) {
  if (!peekKeyword(Keyword::kGROUP)) return true;
  advance();
  if (!expectKeyword(Keyword::kBY) || !parseOrderList(select.group_by)) return false;
  if (peekKeyword(Keyword::kWITH) && peekKeyword(Keyword::kROLLUP, 1)) {
    pos_ += 2;
    select.with_rollup = true;
  }
  return true;
}

bool Parser::parseOrderList(std::vector<OrderItem>& out) {
  do {
    OrderItem item;
    item.range.begin = peek().begin;
    item.expr = parseExpr();
    if (!item.expr) return false;
    if (acceptKeyword(Keyword::kDESC)) {
      item.descending = true;
      item.explicit_direction = true;
    } else if (acceptKeyword(Keyword::kASC)) {
      item.explicit_direction = true;
    }
    item.range.end = lastEnd();
    out.push_back(std::move(item));
  } while (accept(TokenKind::kComma));
  return true;
}

ExprPtr Parser::parseLimitValue() {
  if (peekIs(TokenKind::kInteger) || peekIs(TokenKind::kPlaceholder)) return parseLiteral();
  return fail("integer or '?'"), nullptr;
}

bool Parser::parseLimit(Limit& limit, bool allow_offset) {
  limit.range.begin = advance().begin;  // LIMIT
  ExprPtr first = parseLimitValue();
  if (!first) return false;
  if (allow_offset && accept(TokenKind::kComma)) {
    limit.offset = std::move(first);  // LIMIT offset, count
    if (!(limit.count = parseLimitValue())) return false;
  } else if (allow_offset && acceptKeyword(Keyword::kOFFSET)) {
    limit.count = std::move(first);
    if (!(limit.offset = parseLimitValue())) return false;
  } else {
    limit.count = std::move(first);
  }
  limit.range.end = lastEnd();
  return true;
}

bool Parser::parseLocking(SelectStatement& select) {
  if (peekKeyword(Keyword::kLOCK)) {
    advance();
    if (!expectKeyword(Keyword::kIN) || !expectKeyword(Keyword::kSHARE) ||
        !expectKeyword(Keyword::kMODE)) {
      return false;
    }
    select.lock = LockMode::kLockInShareMode;
    return true;
  }
  if (!peekKeyword(Keyword::kFOR)) return true;
  advance();
  if (acceptKeyword(Keyword::kUPDATE)) select.lock = LockMode::kForUpdate;
  else if (acceptKeyword(Keyword::kSHARE)) select.lock = LockMode::kForShare;
  else return fail("UPDATE or SHARE");
  if (acceptKeyword(Keyword::kOF)) {
    do {
      if (!isNameToken(peek())) return fail("table name");
      advance();
    } while (accept(TokenKind::kComma));
  }
  if (acceptKeyword(Keyword::kNOWAIT)) return true;
  if (acceptKeyword(Keyword::kSKIP)) return expectKeyword(Keyword::kLOCKED);
  return true;
}

}  // namespace sp::parser::detail
