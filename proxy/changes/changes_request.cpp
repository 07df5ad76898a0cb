#include "proxy/changes/changes_request.hpp"

#include <fmt/format.h>

namespace sp::proxy::changes {

namespace {

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::expected<std::string, std::string> percentDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] != '%') {
      out += text[i];
    } else {
      if (i + 2 >= text.size()) {
        return std::unexpected(std::string("a '%' not followed by two hex digits"));
      }
      int hi = hexDigit(text[i + 1]), lo = hexDigit(text[i + 2]);
      if (hi < 0 || lo < 0) return std::unexpected(std::string("a '%' not followed by two hex digits"));
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
  }
  return out;
}

bool tableChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

}  // namespace

std::expected<std::vector<std::string>, std::string> parseTableList(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t end = text.find(',', start);
    std::string_view name = text.substr(start, end == std::string_view::npos ? end : end - start);
    if (name.empty() || name.size() > 64) return std::unexpected(std::string("tables: an empty or too long name"));
    for (char c : name) {
      if (!tableChar(c)) return std::unexpected(std::string("tables: names are letters, digits, '_' and '$'"));
    }
    if (out.size() == kMaxStreamTables) return std::unexpected(fmt::format("tables: more than {}", kMaxStreamTables));
    out.emplace_back(name);
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

std::expected<StreamRequest, std::string> parseChangesQuery(std::string_view query) {
  StreamRequest out;
  bool have_tables = false;
  size_t start = 0;
  while (start <= query.size() && !query.empty()) {
    size_t end = query.find('&', start);
    std::string_view pair = query.substr(start, end == std::string_view::npos ? end : end - start);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos) return std::unexpected(fmt::format("parameter '{}' has no value", pair.substr(0, 32)));
    auto value = percentDecode(pair.substr(eq + 1));
    if (!value) return std::unexpected(value.error());
    std::string_view key = pair.substr(0, eq);
    if (key == "tables") {
      if (have_tables) return std::unexpected(std::string("tables given twice"));
      auto tables = parseTableList(*value);
      if (!tables) return std::unexpected(tables.error());
      out.tables = std::move(*tables);
      have_tables = true;
    } else if (key == "from") {
      if (out.from) return std::unexpected(std::string("from given twice"));
      auto position = parsePosition(*value);
      if (!position) return std::unexpected("from: " + position.error());
      out.from = std::move(*position);
    } else {
      return std::unexpected(fmt::format("unknown parameter '{}' (tables, from)", key.substr(0, 32)));
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace sp::proxy::changes
