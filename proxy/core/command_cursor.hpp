// A cursor over the significant tokens of one admin command (no trailing
// ';'), read with the SQL lexer: shared by the command parsers of the admin
// port (lifecycle, moves). Pure.
#pragma once
#include <charconv>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parser/lexer.hpp"
#include "routing/conditions.hpp"

namespace sp::proxy {

class CommandCursor {
 public:
  explicit CommandCursor(std::string_view sql) : sql_(sql), tokens_(parser::tokenize(sql)) {
    while (!tokens_.empty() && (tokens_.back().is(parser::TokenKind::kEnd) || tokens_.back().is(parser::TokenKind::kSemicolon))) {
      tokens_.pop_back();
    }
  }
  bool done() const { return pos_ >= tokens_.size(); }
  bool hasError() const {
    for (const auto& t : tokens_) {
      if (t.isError()) return true;
    }
    return false;
  }
  // Consumes the bare words if they come next.
  bool accept(std::initializer_list<std::string_view> words) {
    size_t i = pos_;
    for (auto w : words) {
      if (i >= tokens_.size() || !tokens_[i].is(parser::TokenKind::kIdentifier) || !routing::equalsIgnoreCase(tokens_[i].text(sql_), w)) {
        return false;
      }
      ++i;
    }
    pos_ = i;
    return true;
  }
  std::optional<uint64_t> integer() {
    if (done() || !tokens_[pos_].is(parser::TokenKind::kInteger)) return std::nullopt;
    auto text = tokens_[pos_].text(sql_);
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
    ++pos_;
    return v;
  }
  std::optional<std::string> name() {
    if (done()) return std::nullopt;
    const parser::Token& t = tokens_[pos_];
    if (t.is(parser::TokenKind::kIdentifier)) {
      ++pos_;
      return std::string(t.text(sql_));
    }
    if (t.is(parser::TokenKind::kQuotedIdentifier)) {
      ++pos_;
      return parser::unquoteIdentifier(t.text(sql_));
    }
    return std::nullopt;
  }
  // Consumes one punctuation token of `kind` if it comes next.
  bool accept(parser::TokenKind kind) {
    if (done() || !tokens_[pos_].is(kind)) return false;
    ++pos_;
    return true;
  }
  std::optional<std::string> string() {
    if (done() || !tokens_[pos_].is(parser::TokenKind::kString)) return std::nullopt;
    return parser::unquoteString(tokens_[pos_++].text(sql_));
  }

 private:
  std::string_view sql_;
  std::vector<parser::Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace sp::proxy
