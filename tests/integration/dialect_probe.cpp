// Reads "charset<TAB>sql_mode<TAB>sql" lines (sql written with %NN escapes)
// and prints, one line each, how the lexer reads the SELECT: the row that
// tests/integration/dialect_server.py compares with the server's. With
// "split:charset", prints the statements splitStatements() finds as
// "begin-end" byte ranges separated by spaces.
#include <iostream>
#include <string>

#include "parser/dialect.hpp"
#include "parser/split.hpp"
#include "tests/unit/parser/dialect_row.hpp"

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    const size_t a = line.find('\t');
    const size_t b = line.find('\t', a + 1);
    if (a == std::string::npos || b == std::string::npos) return 2;
    std::string charset_name = line.substr(0, a);
    const bool split = charset_name.starts_with("split:");
    if (split) charset_name.erase(0, 6);
    const auto charset = sp::parser::charsetByName(charset_name);
    if (charset.status != sp::parser::CharsetStatus::kOk) {
      std::cout << "UNSUPPORTED\n";
      continue;
    }
    sp::parser::Dialect dialect = sp::parser::fromSqlMode(line.substr(a + 1, b - a - 1));
    dialect.charset = charset.charset;
    const std::string sql = sp::parser::unescape(line.substr(b + 1));
    if (split) {
      for (const auto& span : sp::parser::splitStatements(sql, dialect)) std::cout << span.begin << '-' << span.end << ' ';
      std::cout << '\n';
    } else {
      std::cout << sp::parser::lexerRow(sql, dialect) << '\n';
    }
  }
  return 0;
}
