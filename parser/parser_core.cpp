// Token access, error reporting and the statement-level entry point.
#include <algorithm>
#include <string>

#include "parser/ast_depth.hpp"
#include "parser/parser_impl.hpp"

namespace sp::parser {
namespace detail {
namespace {

// Each nesting level of parentheses costs two guards, so this allows ~64
// levels: far beyond real queries, and bounded stack use on hostile input.
constexpr int kMaxDepth = 128;
constexpr size_t kNearLength = 30;

std::string_view lexerErrorName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kErrorUnterminatedString: return "unterminated string";
    case TokenKind::kErrorUnterminatedComment: return "unterminated comment";
    case TokenKind::kErrorUnterminatedQuotedIdentifier: return "unterminated quoted identifier";
    case TokenKind::kErrorBadLiteral: return "malformed literal";
    default: return "unexpected character";
  }
}

}  // namespace

DepthGuard::DepthGuard(Parser& parser) : parser_(parser) {
  if (++parser_.depth_ > kMaxDepth) ok_ = parser_.failTooComplex("nesting too deep");
}

Parser::Parser(std::string_view sql, std::vector<Token> tokens, const ParseLimits& limits,
               const Dialect& dialect)
    : sql_(sql), tokens_(std::move(tokens)), limits_(limits), dialect_(dialect) {}

ExprPtr Parser::newExpr() {
  ++nodes_;
  return std::make_unique<Expr>();
}

TableRefPtr Parser::newTableRef() {
  ++nodes_;
  return std::make_unique<TableRef>();
}

bool Parser::withinNodeBudget() {
  if (nodes_ <= limits_.max_nodes) return true;
  return failTooComplex("statement too complex: more than " + std::to_string(limits_.max_nodes) +
                        " expression nodes (limits.max_statement_nodes)");
}

bool Parser::failTooComplex(std::string problem) {
  if (error_) return false;
  failWith(problem);
  error_->kind = ParseErrorKind::kTooComplex;
  return false;
}

const Token& Parser::peek(size_t ahead) const {
  const size_t index = pos_ + ahead;
  return index < tokens_.size() ? tokens_[index] : tokens_.back();  // back() is kEnd
}

const Token& Parser::advance() {
  const Token& token = peek();
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return token;
}

bool Parser::accept(TokenKind kind) {
  if (!peekIs(kind)) return false;
  advance();
  return true;
}

bool Parser::acceptKeyword(Keyword k) {
  if (!peekKeyword(k)) return false;
  advance();
  return true;
}

bool Parser::expect(TokenKind kind, std::string_view what) {
  return accept(kind) || fail(what);
}

bool Parser::expectKeyword(Keyword k) { return acceptKeyword(k) || fail(keywordName(k)); }

bool Parser::fail(std::string_view expected) {
  if (peek().isError()) return failWith(lexerErrorName(peek().kind));
  return failWith("expected " + std::string(expected));
}

bool Parser::failWith(std::string_view problem) {
  if (error_) return false;
  const Token& token = peek();
  std::string_view near = sql_.substr(token.begin, kNearLength);
  // Do not cut a UTF-8 sequence in half: the message may end up in an ERR packet.
  if (token.begin + near.size() < sql_.size()) {
    while (!near.empty() && (static_cast<unsigned char>(sql_[token.begin + near.size()]) & 0xC0) == 0x80) {
      near.remove_suffix(1);
    }
  }
  std::string message(problem);
  message += " at offset " + std::to_string(token.begin) + " near '" + std::string(near) + "'";
  error_ = ParseError{std::move(message), token.begin};
  return false;
}

uint32_t Parser::lastEnd() const { return pos_ == 0 ? 0 : tokens_[pos_ - 1].end; }

bool Parser::isNameToken(const Token& token) const {
  return token.is(TokenKind::kQuotedIdentifier) ||
         (token.is(TokenKind::kIdentifier) && !isReservedKeyword(token.keyword));
}

bool Parser::peekWord(std::string_view upper_word, size_t ahead) const {
  const Token& token = peek(ahead);
  if (!token.is(TokenKind::kIdentifier)) return false;
  const std::string_view text = token.text(sql_);
  if (text.size() != upper_word.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != upper_word[i]) return false;
  }
  return true;
}

Identifier Parser::makeIdentifier(const Token& token) const {
  Identifier id;
  id.range = SourceRange{token.begin, token.end};
  id.quoted = token.is(TokenKind::kQuotedIdentifier);
  const std::string_view text = token.text(sql_);
  id.value = id.quoted ? text.substr(1, text.size() - 2) : text;
  return id;
}

ParseResult Parser::parseStatement() {
  Statement statement;
  const Token& first = peek();
  statement.range.begin = first.begin;
  if (first.is(TokenKind::kLeftParen) || first.isKeyword(Keyword::kSELECT)) {
    statement.kind = StatementKind::kSelect;
    statement.select = parseQuery();
  } else if (first.isKeyword(Keyword::kINSERT) || first.isKeyword(Keyword::kREPLACE)) {
    statement.kind = first.isKeyword(Keyword::kINSERT) ? StatementKind::kInsert
                                                       : StatementKind::kReplace;
    statement.insert = parseInsert();
  } else if (first.isKeyword(Keyword::kUPDATE)) {
    statement.kind = StatementKind::kUpdate;
    statement.update = parseUpdate();
  } else if (first.isKeyword(Keyword::kDELETE)) {
    statement.kind = StatementKind::kDelete;
    statement.del = parseDelete();
  } else if (first.isKeyword(Keyword::kWITH)) {
    failWith("WITH (common table expressions) is not supported");
  } else {
    return parseOtherStatement(std::move(statement));
  }
  if (!failed()) {
    statement.range.end = lastEnd();
    accept(TokenKind::kSemicolon);
    if (!peekIs(TokenKind::kEnd)) fail("end of statement");
  }
  if (!failed()) {
    // Chains (a AND b AND ...) are built in loops, so the parser's own
    // recursion guard does not bound how deep the finished tree is.
    const size_t depth = astDepth(statement);
    if (depth > limits_.max_depth) {
      pos_ = 0;
      failTooComplex("statement too complex: expressions nested " + std::to_string(depth) +
                     " levels deep, more than " + std::to_string(limits_.max_depth) +
                     " (limits.max_expression_depth)");
    }
  }
  if (failed()) return std::unexpected(std::move(*error_));
  statement.placeholder_count = placeholders_;
  statement.node_count = static_cast<uint32_t>(nodes_);
  statement.uses_window_functions = windows_;
  return statement;
}

// Statements outside the parsed subset: kind only, as classify() sees them.
ParseResult Parser::parseOtherStatement(Statement statement) {
  size_t last = tokens_.size() - 1;  // kEnd
  while (last > 0 && tokens_[last - 1].is(TokenKind::kSemicolon)) --last;
  statement.kind = classify(sql_, dialect_).kind;
  switch (statement.kind) {
    case StatementKind::kSelect: case StatementKind::kInsert: case StatementKind::kReplace:
    case StatementKind::kUpdate: case StatementKind::kDelete:
      failWith("this form of the statement is not supported");
      return std::unexpected(std::move(*error_));
    default:
      break;
  }
  for (const Token& token : tokens_) {
    if (token.isError()) {
      pos_ = static_cast<size_t>(&token - tokens_.data());
      fail("token");
      return std::unexpected(std::move(*error_));
    }
  }
  statement.range.end = last > 0 ? tokens_[last - 1].end : statement.range.begin;
  return statement;
}

}  // namespace detail

namespace {

// Every node takes at least one token and real statements spend at most a
// few per node, so tokens are capped in proportion to the node budget: a
// 20 MB IN list is refused after a bounded number of tokens instead of
// holding all of them (12 bytes each) first.
std::expected<std::vector<Token>, ParseError> tokenizeWithin(std::string_view sql, const ParseLimits& limits,
                                                             const Dialect& dialect) {
  const uint64_t max_tokens = maxStatementTokens(limits);
  std::vector<Token> tokens;
  tokens.reserve(std::min<uint64_t>(sql.size() / 4 + 8, max_tokens + 1));
  Lexer lexer(sql, dialect);
  for (;;) {
    Token token = lexer.nextSignificant();
    tokens.push_back(token);
    if (token.kind == TokenKind::kEnd) return tokens;
    if (tokens.size() > max_tokens) {
      return std::unexpected(ParseError{"statement too complex: more than " + std::to_string(max_tokens) +
                                            " tokens (limits.max_statement_nodes " +
                                            std::to_string(limits.max_nodes) + ")",
                                        token.begin, ParseErrorKind::kTooComplex});
    }
  }
}

}  // namespace

ParseResult parse(std::string_view sql, const ParseLimits& limits, const Dialect& dialect) {
  auto tokens = tokenizeWithin(sql, limits, dialect);
  if (!tokens) return std::unexpected(std::move(tokens.error()));
  detail::Parser parser(sql, std::move(*tokens), limits, dialect);
  return parser.parseStatement();
}

}  // namespace sp::parser
