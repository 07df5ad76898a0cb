#include "routing/read_split.hpp"

#include <algorithm>
#include <array>

#include "parser/text_search.hpp"
#include "routing/conditions.hpp"

namespace sp::routing {
namespace {

bool contains(std::string_view text, std::string_view word) { return parser::containsIgnoringAsciiCase(text, word); }

// Functions whose answer is the session's connection or one server's state,
// or that change something: a replica would answer another question.
constexpr std::array<std::string_view, 15> kPrimaryFunctions = {
    "get_lock", "release_lock",    "release_all_locks", "is_free_lock",    "is_used_lock",
    "nextval",  "lastval",         "setval",            "last_insert_id",  "found_rows",
    "row_count", "master_pos_wait", "master_gtid_wait", "binlog_gtid_pos", "connection_id"};

}  // namespace

ReadHint readHint(std::string_view sql) {
  // Only comments before the first word count: a hint in a string or
  // further on is data, and the lexer would see a comment there anyway.
  size_t i = 0;
  while (i < sql.size()) {
    char c = sql[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    if (!sql.substr(i).starts_with("/*") || sql.substr(i).starts_with("/*!") || sql.substr(i).starts_with("/*M!")) {
      return ReadHint::kNone;
    }
    size_t end = sql.find("*/", i + 2);
    if (end == std::string_view::npos) return ReadHint::kNone;
    std::string_view body = sql.substr(i + 2, end - i - 2);
    if (contains(body, "shardproxy_reads=replica")) return ReadHint::kReplica;
    if (contains(body, "shardproxy_reads=primary")) return ReadHint::kPrimary;
    i = end + 2;
  }
  return ReadHint::kNone;
}

bool replicaReadable(const parser::StatementInfo& info, std::string_view sql, std::span<const parser::Token> tokens) {
  using parser::TokenKind;
  if (info.kind != parser::StatementKind::kSelect) return false;
  if (info.multiple_statements || info.uses_user_variable || info.uses_named_lock || info.uses_found_rows ||
      info.uses_last_insert_id || info.calls_connection_id || info.reads_diagnostics || info.creates_temporary_table) {
    return false;
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    const auto& t = tokens[i];
    if (t.isError() || t.is(TokenKind::kSystemVariable) || t.is(TokenKind::kUserVariable) ||
        t.is(TokenKind::kSemicolon)) {
      return false;
    }
    if (!t.is(TokenKind::kIdentifier)) continue;
    std::string_view word = t.text(sql);
    const bool qualified = i > 0 && tokens[i - 1].is(TokenKind::kDot);
    const bool called = i + 1 < tokens.size() && tokens[i + 1].is(TokenKind::kLeftParen);
    if (!qualified) {
      // SELECT ... INTO, FOR UPDATE / FOR SHARE, LOCK IN SHARE MODE, NEXT/PREVIOUS VALUE FOR.
      if (equalsIgnoreCase(word, "into")) return false;
      if (equalsIgnoreCase(word, "lock") && i + 1 < tokens.size() && equalsIgnoreCase(tokens[i + 1].text(sql), "in")) return false;
      if (equalsIgnoreCase(word, "for") && i + 1 < tokens.size() &&
          (equalsIgnoreCase(tokens[i + 1].text(sql), "update") || equalsIgnoreCase(tokens[i + 1].text(sql), "share"))) {
        return false;
      }
      if (equalsIgnoreCase(word, "value") && i + 1 < tokens.size() && equalsIgnoreCase(tokens[i + 1].text(sql), "for")) return false;
    }
    if (called && std::any_of(kPrimaryFunctions.begin(), kPrimaryFunctions.end(),
                              [&](std::string_view f) { return equalsIgnoreCase(word, f); })) {
      return false;
    }
  }
  return true;
}

}  // namespace sp::routing
