// Table references: FROM lists, joins, derived tables, index hints.
#include "parser/parser_impl.hpp"

namespace sp::parser::detail {

bool Parser::parseTableRefList(std::vector<TableRefPtr>& out) {
  do {
    TableRefPtr ref = parseTableRef();
    if (!ref) return false;
    out.push_back(std::move(ref));
  } while (accept(TokenKind::kComma));
  return true;
}

TableRefPtr Parser::parseTableRef() {
  TableRefPtr ref = parseTableFactor();
  while (ref) {
    const Token& token = peek();
    const bool join = token.isKeyword(Keyword::kJOIN) || token.isKeyword(Keyword::kINNER) ||
                      token.isKeyword(Keyword::kCROSS) || token.isKeyword(Keyword::kLEFT) ||
                      token.isKeyword(Keyword::kRIGHT) || token.isKeyword(Keyword::kNATURAL) ||
                      token.isKeyword(Keyword::kSTRAIGHT_JOIN);
    if (!join) break;
    ref = parseJoinTail(std::move(ref));
  }
  return ref;
}

TableRefPtr Parser::parseJoinTail(TableRefPtr left) {
  auto join = newTableRef();
  join->kind = TableRefKind::kJoin;
  const bool natural = acceptKeyword(Keyword::kNATURAL);
  bool needs_condition = false;
  if (acceptKeyword(Keyword::kSTRAIGHT_JOIN)) {
    join->join = JoinKind::kStraight;
  } else {
    if (acceptKeyword(Keyword::kLEFT)) {
      join->join = natural ? JoinKind::kNaturalLeft : JoinKind::kLeft;
      needs_condition = !natural;
      acceptKeyword(Keyword::kOUTER);
    } else if (acceptKeyword(Keyword::kRIGHT)) {
      join->join = natural ? JoinKind::kNaturalRight : JoinKind::kRight;
      needs_condition = !natural;
      acceptKeyword(Keyword::kOUTER);
    } else if (acceptKeyword(Keyword::kCROSS)) {
      join->join = JoinKind::kCross;
    } else {
      acceptKeyword(Keyword::kINNER);
      join->join = natural ? JoinKind::kNaturalInner : JoinKind::kInner;
    }
    if (!expectKeyword(Keyword::kJOIN)) return nullptr;
  }
  join->right = parseTableFactor();
  if (!join->right) return nullptr;
  if (!natural && acceptKeyword(Keyword::kON)) {
    if (!(join->on = parseExpr())) return nullptr;
  } else if (!natural && acceptKeyword(Keyword::kUSING)) {
    if (!parseColumnList(join->using_columns)) return nullptr;
  } else if (needs_condition) {
    return fail("ON or USING"), nullptr;
  }
  join->range = SourceRange{left->range.begin, lastEnd()};
  join->left = std::move(left);
  return join;
}

TableRefPtr Parser::parseTableFactor() {
  DepthGuard guard(*this);
  if (!guard.ok() || !withinNodeBudget()) return nullptr;
  const uint32_t begin = peek().begin;
  auto ref = newTableRef();
  if (peekIs(TokenKind::kLeftParen) && peekStartsQuery(1)) {
    advance();
    ref->kind = TableRefKind::kDerived;
    ref->subquery = parseQuery();
    if (!ref->subquery || !expect(TokenKind::kRightParen, "')' closing derived table")) return nullptr;
    if (!parseAlias(ref->alias, false)) return nullptr;
    if (ref->alias.empty()) return fail("alias for derived table"), nullptr;
  } else if (accept(TokenKind::kLeftParen)) {
    // ( t1 JOIN t2 ON ... ): a parenthesised join keeps its inner tree.
    ref = parseTableRef();
    if (!ref || !expect(TokenKind::kRightParen, "')'")) return nullptr;
  } else {
    if (!parseTableName(ref->name) || !parseAlias(ref->alias, false) || !skipIndexHints()) {
      return nullptr;
    }
  }
  ref->range = SourceRange{begin, lastEnd()};
  return ref;
}

bool Parser::parseTableName(TableName& name) {
  if (!isNameToken(peek())) return fail("table name");
  const Token& first = advance();
  name.range.begin = first.begin;
  if (peekIs(TokenKind::kDot) &&
      (peekIs(TokenKind::kIdentifier, 1) || peekIs(TokenKind::kQuotedIdentifier, 1))) {
    advance();
    name.db = makeIdentifier(first);
    name.table = makeIdentifier(advance());
  } else {
    name.table = makeIdentifier(first);
  }
  name.range.end = lastEnd();
  return true;
}

// USE|IGNORE|FORCE INDEX|KEY [FOR JOIN|ORDER BY|GROUP BY] (names): they do
// not change routing, so they are checked for syntax and skipped (their
// text stays in the table reference's range).
bool Parser::skipIndexHints() {
  while (peekKeyword(Keyword::kUSE) || peekKeyword(Keyword::kIGNORE) ||
         peekKeyword(Keyword::kFORCE)) {
    advance();
    if (!acceptKeyword(Keyword::kINDEX) && !acceptKeyword(Keyword::kKEY)) return fail("INDEX or KEY");
    if (acceptKeyword(Keyword::kFOR)) {
      if (!acceptKeyword(Keyword::kJOIN)) {
        if (!acceptKeyword(Keyword::kORDER) && !acceptKeyword(Keyword::kGROUP)) {
          return fail("JOIN, ORDER BY or GROUP BY");
        }
        if (!expectKeyword(Keyword::kBY)) return false;
      }
    }
    if (!expect(TokenKind::kLeftParen, "'('")) return false;
    while (!peekIs(TokenKind::kRightParen)) {
      if (!isNameToken(peek())) return fail("index name");
      advance();
      if (!accept(TokenKind::kComma)) break;
    }
    if (!expect(TokenKind::kRightParen, "')'")) return false;
  }
  return true;
}

}  // namespace sp::parser::detail
