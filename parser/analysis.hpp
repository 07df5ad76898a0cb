// One analysis per statement: the text is lexed once, with the session's
// dialect, and every consumer reads the result: session control (the
// statement's kind and effects, classify.hpp), KILL, CONNECTION_ID(), the
// diagnostics statements (local_queries.hpp), EXPLAIN SHARDS, the statement
// policy and the plan cache (routing/). The tree is built only where it is
// needed: by the plan cache, on a miss.
#pragma once
#include <span>
#include <string_view>
#include <vector>

#include "parser/classify.hpp"
#include "parser/dialect.hpp"
#include "parser/lexer.hpp"

namespace sp::parser {

struct StatementAnalysis {
  std::string_view sql;
  Dialect dialect;
  std::vector<Token> tokens;  // the significant tokens, then one kEnd
  StatementInfo info;

  // The tokens as the default dialect reads them (consumers that lex
  // without a dialect: the statement policy, the plan cache's normalizer);
  // empty when the session's dialect differs, and they must lex themselves.
  std::span<const Token> defaultTokens() const {
    return dialect == Dialect{} ? std::span<const Token>(tokens) : std::span<const Token>();
  }
};

// Fills `out` (its buffers are reused: a session keeps one analysis).
void analyze(std::string_view sql, const Dialect& dialect, StatementAnalysis& out);

}  // namespace sp::parser
