// Splitting a COM_QUERY text into statements as the server does under
// CLIENT_MULTI_STATEMENTS: at each ';' outside strings, comments and
// compound statements (BEGIN ... END bodies of CREATE PROCEDURE / FUNCTION /
// TRIGGER / EVENT, BEGIN NOT ATOMIC ... END, IF / CASE / LOOP / WHILE /
// REPEAT / FOR ... END x). DELIMITER is a mysql-client command and means
// nothing here.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "parser/dialect.hpp"

namespace sp::parser {

struct StatementSpan {
  uint32_t begin = 0;  // first byte after the previous ';' and the whitespace the server skips
  uint32_t end = 0;    // offset of the ';' ending it, or sql.size()
  std::string_view text(std::string_view sql) const { return sql.substr(begin, end - begin); }
  bool operator==(const StatementSpan&) const = default;
};

// Every statement with at least one significant token, in order. Each span
// is lexed from its own beginning, as the server parses each statement
// afresh: plan every span with parse(span.text(sql), ...) on its own text
// (a versioned comment opened in one statement is not closed in the next).
// A lexer error (unterminated string or comment) ends the last span at the
// end of the text. When the compound-statement structure is unclear, the
// split errs on the side of more statements (the server rejects a
// fragment), never fewer (a statement hidden in another's span would go
// unplanned).
std::vector<StatementSpan> splitStatements(std::string_view sql, const Dialect& dialect = {});

}  // namespace sp::parser
