// INSERT / REPLACE, UPDATE and DELETE.
#include "parser/parser_impl.hpp"

namespace sp::parser::detail {

std::unique_ptr<InsertStatement> Parser::parseInsert() {
  auto insert = std::make_unique<InsertStatement>();
  insert->replace = advance().isKeyword(Keyword::kREPLACE);
  while (acceptKeyword(Keyword::kLOW_PRIORITY) || acceptKeyword(Keyword::kDELAYED) ||
         acceptKeyword(Keyword::kHIGH_PRIORITY)) {
  }
  insert->ignore = acceptKeyword(Keyword::kIGNORE);
  acceptKeyword(Keyword::kINTO);
  if (!parseTableName(insert->table)) return nullptr;
  if (peekIs(TokenKind::kLeftParen) && !peekStartsQuery()) {
    advance();
    if (!peekIs(TokenKind::kRightParen) && !parseColumnList(insert->columns)) return nullptr;
    if (insert->columns.empty()) advance();  // "()" : no columns
  }
  if (acceptKeyword(Keyword::kSET)) {
    if (!insert->columns.empty()) return fail("VALUES or SELECT"), nullptr;
    if (!parseAssignments(insert->set)) return nullptr;
  } else if (peekStartsQuery()) {
    if (!(insert->select = parseQuery())) return nullptr;
  } else if (!parseInsertValues(*insert)) {
    return nullptr;
  }
  if (acceptKeyword(Keyword::kON)) {
    if (!expectKeyword(Keyword::kDUPLICATE) || !expectKeyword(Keyword::kKEY) ||
        !expectKeyword(Keyword::kUPDATE) || !parseAssignments(insert->on_duplicate)) {
      return nullptr;
    }
  }
  return insert;
}

bool Parser::parseInsertValues(InsertStatement& insert) {
  if (!acceptKeyword(Keyword::kVALUES) && !acceptKeyword(Keyword::kVALUE)) {
    return fail("VALUES, SET or SELECT");
  }
  do {
    if (!parseValuesRow(insert)) return false;
  } while (accept(TokenKind::kComma));
  // MySQL 8: VALUES (...) AS new [(a, b)] ON DUPLICATE KEY UPDATE c = new.c
  if (acceptKeyword(Keyword::kAS)) {
    if (!isNameToken(peek())) return fail("row alias");
    insert.alias = makeIdentifier(advance());
    std::vector<Identifier> ignored;
    if (accept(TokenKind::kLeftParen) && !parseColumnList(ignored)) return false;
  }
  return true;
}

bool Parser::parseValuesRow(InsertStatement& insert) {
  const uint32_t begin = peek().begin;
  acceptKeyword(Keyword::kROW);  // VALUES ROW(1, 2)
  if (!expect(TokenKind::kLeftParen, "'(' starting a row of values")) return false;
  std::vector<ExprPtr> row;
  if (!peekIs(TokenKind::kRightParen)) {
    do {
      ExprPtr value = parseExpr();
      if (!value) return false;
      row.push_back(std::move(value));
    } while (accept(TokenKind::kComma));
  }
  if (!expect(TokenKind::kRightParen, "')' closing row of values")) return false;
  insert.rows.push_back(std::move(row));
  insert.row_ranges.push_back(SourceRange{begin, lastEnd()});
  return true;
}

// Parses "name, name, ... )" after an opening parenthesis already consumed
// (or expects one when called at '(').
bool Parser::parseColumnList(std::vector<Identifier>& out) {
  if (peekIs(TokenKind::kLeftParen)) advance();
  do {
    if (!isNameToken(peek())) return fail("column name");
    out.push_back(makeIdentifier(advance()));
  } while (accept(TokenKind::kComma));
  return expect(TokenKind::kRightParen, "')' closing column list");
}

bool Parser::parseAssignments(std::vector<Assignment>& out) {
  do {
    Assignment assignment;
    assignment.range.begin = peek().begin;
    if (!isNameToken(peek())) return fail("column name");
    ExprPtr column = parseColumnRef();
    if (!column) return false;
    assignment.column = column->column;
    if (!expect(TokenKind::kEquals, "'='") || !(assignment.value = parseExpr())) return false;
    assignment.range.end = lastEnd();
    out.push_back(std::move(assignment));
  } while (accept(TokenKind::kComma));
  return true;
}

std::unique_ptr<UpdateStatement> Parser::parseUpdate() {
  advance();  // UPDATE
  auto update = std::make_unique<UpdateStatement>();
  acceptKeyword(Keyword::kLOW_PRIORITY);
  update->ignore = acceptKeyword(Keyword::kIGNORE);
  if (!parseTableRefList(update->tables) || !expectKeyword(Keyword::kSET) ||
      !parseAssignments(update->set)) {
    return nullptr;
  }
  if (acceptKeyword(Keyword::kWHERE) && !(update->where = parseExpr())) return nullptr;
  if (peekKeyword(Keyword::kORDER)) {
    advance();
    if (!expectKeyword(Keyword::kBY) || !parseOrderList(update->order_by)) return nullptr;
  }
  if (peekKeyword(Keyword::kLIMIT) && !parseLimit(update->limit, false)) return nullptr;
  return update;
}

std::unique_ptr<DeleteStatement> Parser::parseDelete() {
  advance();  // DELETE
  auto del = std::make_unique<DeleteStatement>();
  while (acceptKeyword(Keyword::kLOW_PRIORITY) || acceptKeyword(Keyword::kQUICK)) {
  }
  del->ignore = acceptKeyword(Keyword::kIGNORE);
  // DELETE t1[.*], t2 FROM refs  |  DELETE FROM t1[.*], t2 USING refs  |  DELETE FROM t
  auto parseTargets = [&] {
    do {
      TableName name;
      if (!parseTableName(name)) return false;
      if (peekIs(TokenKind::kDot) && peekIs(TokenKind::kStar, 1)) pos_ += 2;
      del->targets.push_back(name);
    } while (accept(TokenKind::kComma));
    return true;
  };
  if (!acceptKeyword(Keyword::kFROM)) {
    if (!parseTargets() || !expectKeyword(Keyword::kFROM)) return nullptr;
    if (!parseTableRefList(del->from)) return nullptr;
  } else {
    const size_t start = pos_;
    if (!parseTargets()) return nullptr;
    if (acceptKeyword(Keyword::kUSING)) {
      if (!parseTableRefList(del->from)) return nullptr;
    } else {
      // Single-table form (possibly with an alias): re-read as a table reference.
      del->targets.clear();
      pos_ = start;
      TableRefPtr ref = parseTableFactor();
      if (!ref) return nullptr;
      del->from.push_back(std::move(ref));
    }
  }
  if (acceptKeyword(Keyword::kWHERE) && !(del->where = parseExpr())) return nullptr;
  if (peekKeyword(Keyword::kORDER)) {
    advance();
    if (!expectKeyword(Keyword::kBY) || !parseOrderList(del->order_by)) return nullptr;
  }
  if (peekKeyword(Keyword::kLIMIT) && !parseLimit(del->limit, false)) return nullptr;
  return del;
}

}  // namespace sp::parser::detail
