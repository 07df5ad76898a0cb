// Reads "charset<TAB>sql_mode<TAB>sql" lines (sql written with %NN escapes)
// and prints, one line each, how the lexer reads the SELECT: the row that
// tests/integration/dialect_server.py compares with the server's.
#include <iostream>
#include <string>

#include "parser/dialect.hpp"
#include "tests/unit/parser/dialect_row.hpp"

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    const size_t a = line.find('\t');
    const size_t b = line.find('\t', a + 1);
    if (a == std::string::npos || b == std::string::npos) return 2;
    const auto charset = sp::parser::charsetByName(line.substr(0, a));
    if (charset.status != sp::parser::CharsetStatus::kOk) {
      std::cout << "UNSUPPORTED\n";
      continue;
    }
    sp::parser::Dialect dialect = sp::parser::fromSqlMode(line.substr(a + 1, b - a - 1));
    dialect.charset = charset.charset;
    std::cout << sp::parser::lexerRow(sp::parser::unescape(line.substr(b + 1)), dialect) << '\n';
  }
  return 0;
}
