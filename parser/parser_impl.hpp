// Internal: the recursive-descent parser behind parse(). One small member
// function per construct; errors are recorded once (the first one wins) and
// every function returns null/false so callers unwind without exceptions.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "parser/ast.hpp"
#include "parser/lexer.hpp"
#include "parser/parse.hpp"

namespace sp::parser::detail {

class Parser {
 public:
  Parser(std::string_view sql, std::vector<Token> tokens, const ParseLimits& limits,
         const Dialect& dialect);
  ParseResult parseStatement();
  ParseResult parseOtherStatement(Statement statement);

  // --- token access (parser_core.cpp)
  const Token& peek(size_t ahead = 0) const;
  const Token& advance();
  bool peekIs(TokenKind kind, size_t ahead = 0) const { return peek(ahead).is(kind); }
  bool peekKeyword(Keyword k, size_t ahead = 0) const { return peek(ahead).isKeyword(k); }
  bool accept(TokenKind kind);
  bool acceptKeyword(Keyword k);
  bool expect(TokenKind kind, std::string_view what);
  bool expectKeyword(Keyword k);
  bool fail(std::string_view expected);  // "expected X at offset N near '...'"; returns false
  bool failWith(std::string_view problem);  // "<problem> at offset N near '...'"; returns false
  bool failed() const { return error_.has_value(); }
  bool failTooComplex(std::string problem);  // a budget was exceeded (ParseErrorKind::kTooComplex)
  uint32_t lastEnd() const;
  Identifier makeIdentifier(const Token& token) const;
  bool isNameToken(const Token& token) const;
  bool peekWord(std::string_view upper_word, size_t ahead = 0) const;

  // --- expressions (parse_expr.cpp, parse_expr_special.cpp)
  ExprPtr parseExpr();
  ExprPtr parseOr();
  ExprPtr parseXor();
  ExprPtr parseAnd();
  ExprPtr parseNot();
  ExprPtr parsePredicate();
  ExprPtr parseInTail(ExprPtr lhs, bool negated);
  ExprPtr parseIsTail(ExprPtr lhs);
  ExprPtr parseBetweenTail(ExprPtr lhs, bool negated);
  ExprPtr parseLikeTail(ExprPtr lhs, bool negated);
  ExprPtr parseBinaryLevel(int level);
  ExprPtr parseUnary();
  ExprPtr parsePostfix();
  ExprPtr parsePrimary();
  ExprPtr parseLiteral();
  ExprPtr parseParenthesized();
  ExprPtr parseWord();
  ExprPtr parseColumnRef();
  ExprPtr parseRowConstructor();
  bool peekPrefixedString() const;
  ExprPtr parseFunction();
  ExprPtr parseCase();
  ExprPtr parseCast();
  ExprPtr parseConvert();
  ExprPtr parseInterval();
  ExprPtr parseExists(uint32_t begin, bool negated);
  bool parseFunctionArgs(Expr& function);
  bool parseSpecialFunctionArgs(Expr& function);
  bool parseTypeText(Expr& cast);
  ExprPtr makeExpr(ExprKind kind, uint32_t begin);  // range ends at lastEnd()
  ExprPtr makeBinary(BinaryOp op, ExprPtr lhs, ExprPtr rhs);
  // Every node is made here, so the node budget counts all of them.
  ExprPtr newExpr();
  TableRefPtr newTableRef();
  // False (with a kTooComplex error) once the statement has more nodes than
  // the budget; checked before each operand, so a chain stops within a node.
  bool withinNodeBudget();
  bool peekStartsQuery(size_t ahead = 0) const;

  // --- SELECT (parse_select.cpp)
  SelectPtr parseQuery();
  SelectPtr parseQueryPrimary(bool& parenthesized);
  SelectPtr parseSelectBlock();
  bool parseSelectModifiers(SelectStatement& select);
  bool parseSelectItem(SelectItem& item);
  bool parseAlias(Identifier& alias, bool allow_string);
  bool parseInto(SelectStatement& select);
  bool parseGroupBy(SelectStatement& select);
  bool parseOrderList(std::vector<OrderItem>& out);
  // ( [name] [PARTITION BY ..] [ORDER BY ..] [frame] ) after OVER or WINDOW name AS.
  bool skipToClosingParen(std::string_view what);
  bool parseWindowSpec(std::vector<ExprPtr>& partition, std::vector<OrderItem>& order);
  bool parseLimit(Limit& limit, bool allow_offset);
  ExprPtr parseLimitValue();
  bool parseLocking(SelectStatement& select);

  // --- table references (parse_from.cpp)
  bool parseTableRefList(std::vector<TableRefPtr>& out);
  TableRefPtr parseTableRef();
  TableRefPtr parseTableFactor();
  TableRefPtr parseJoinTail(TableRefPtr left);
  bool parseTableName(TableName& name);
  bool skipIndexHints();

  // --- INSERT / UPDATE / DELETE (parse_dml.cpp)
  std::unique_ptr<InsertStatement> parseInsert();
  bool parseInsertValues(InsertStatement& insert);
  bool parseValuesRow(InsertStatement& insert);
  std::unique_ptr<UpdateStatement> parseUpdate();
  std::unique_ptr<DeleteStatement> parseDelete();
  bool parseAssignments(std::vector<Assignment>& out);
  bool parseColumnList(std::vector<Identifier>& out);

 private:
  friend class DepthGuard;
  std::string_view sql_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  uint32_t placeholders_ = 0;
  bool windows_ = false;  // an OVER was parsed
  int depth_ = 0;
  ParseLimits limits_;
  Dialect dialect_;
  uint64_t nodes_ = 0;  // Expr and TableRef nodes made so far
  std::optional<ParseError> error_;
};

// Bounds recursion so hostile input ("((((...") cannot exhaust the stack.
class DepthGuard {
 public:
  explicit DepthGuard(Parser& parser);
  ~DepthGuard() { --parser_.depth_; }
  bool ok() const { return ok_; }

 private:
  Parser& parser_;
  bool ok_ = true;
};

}  // namespace sp::parser::detail
