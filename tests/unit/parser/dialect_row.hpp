// Test helper shared by dialect_test.cpp and the dialect probe of the
// integration test: how the lexer reads a `SELECT item, ...` statement,
// printed the way tests/integration/dialect_server.py prints server rows.
#pragma once
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "parser/lexer.hpp"
#include "parser/parse.hpp"

namespace sp::parser {

// "%NN" -> byte, "%%" -> '%'.
inline std::string unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 1 < text.size() && text[i + 1] == '%') {
      out.push_back('%');
      ++i;
    } else if (text[i] == '%' && i + 2 < text.size()) {
      out.push_back(static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

inline std::string show(std::string_view bytes) {
  std::string out;
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (b == '%') {
      out += "%%";
    } else if (b >= 0x20 && b < 0x7F) {
      out.push_back(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", b);
      out += hex;
    }
  }
  return out;
}

inline std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

// How the lexer reads a `SELECT item, item ...` case: each item that is one
// literal token becomes its value, any other item "*"; "ERR" when the text
// does not lex or parse.
inline std::string lexerRow(const std::string& sql, const Dialect& dialect) {
  const std::vector<Token> tokens = tokenize(sql, dialect);
  for (const Token& t : tokens) {
    if (t.isError()) return "ERR";
  }
  if (!parse(sql, dialect)) return "ERR";
  std::vector<std::string> items;
  std::vector<const Token*> item;
  int depth = 0;
  auto flush = [&] {
    if (item.size() == 1 && item[0]->is(TokenKind::kString)) {
      items.push_back(show(unquoteString(item[0]->text(sql), dialect)));
    } else if (item.size() == 1 && item[0]->is(TokenKind::kInteger)) {
      items.push_back(std::string(item[0]->text(sql)));
    } else {
      items.push_back("*");
    }
    item.clear();
  };
  for (size_t i = 1; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (t.is(TokenKind::kLeftParen)) ++depth;
    if (t.is(TokenKind::kRightParen)) --depth;
    if (depth == 0 && (t.is(TokenKind::kEnd) || t.isKeyword(Keyword::kFROM))) break;
    if (depth == 0 && t.is(TokenKind::kComma)) {
      flush();
      continue;
    }
    item.push_back(&t);
  }
  flush();
  std::string row;
  for (const std::string& v : items) row += (row.empty() ? "" : " ; ") + v;
  return row;
}

}  // namespace sp::parser
