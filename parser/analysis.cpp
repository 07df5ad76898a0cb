#include "parser/analysis.hpp"

namespace sp::parser {

void analyze(std::string_view sql, const Dialect& dialect, StatementAnalysis& out) {
  out.sql = sql;
  out.dialect = dialect;
  tokenizeInto(sql, dialect, out.tokens);
  out.info = classify(sql, out.tokens, dialect);
}

}  // namespace sp::parser
