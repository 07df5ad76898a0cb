#include "parser/implicit_commit.hpp"

#include <array>

#include "parser/lexer.hpp"
#include "parser/text_search.hpp"

namespace sp::parser {
namespace {

bool spells(std::string_view word, std::string_view upper) {
  if (word.size() != upper.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (lowerAscii(word[i]) != lowerAscii(upper[i])) return false;
  }
  return true;
}

// Administrative statements the server commits before (classified kOther).
constexpr std::array<std::string_view, 10> kAdminWords = {"GRANT",    "REVOKE",  "ANALYZE", "CACHE",   "CHECK",
                                                          "FLUSH",    "OPTIMIZE", "REPAIR", "INSTALL", "UNINSTALL"};

}  // namespace

bool causesImplicitCommit(std::string_view sql, StatementKind kind, const Dialect& dialect) {
  using K = StatementKind;
  if (kind != K::kBegin && kind != K::kLockTables && kind != K::kDdl && kind != K::kOther && kind != K::kSet) {
    return false;
  }
  // The first words decide; the rest of the statement is the server's to read.
  std::array<std::string_view, 4> words{};
  Lexer lexer(sql, dialect);
  for (auto& w : words) {
    const Token t = lexer.nextSignificant();
    if (t.kind != TokenKind::kIdentifier) break;
    w = t.text(sql);
  }
  if (spells(words[0], "SET")) return spells(words[1], "PASSWORD");
  switch (kind) {
    case K::kBegin:
      return !spells(words[0], "XA");  // BEGIN, START TRANSACTION
    case K::kLockTables:
      return true;  // LOCK TABLES, FLUSH TABLES WITH READ LOCK
    case K::kDdl:
      // CREATE [OR REPLACE] TEMPORARY TABLE, DROP TEMPORARY TABLE commit nothing.
      for (const auto& w : words) {
        if (spells(w, "TEMPORARY")) return false;
      }
      return true;
    default:
      for (std::string_view admin : kAdminWords) {
        if (spells(words[0], admin)) return true;
      }
      return (spells(words[0], "LOAD") && spells(words[1], "INDEX")) ||
             (spells(words[0], "RESET") && !spells(words[1], "QUERY")) ||
             ((spells(words[0], "START") || spells(words[0], "STOP")) &&
              (spells(words[1], "SLAVE") || spells(words[1], "REPLICA") || spells(words[1], "ALL"))) ||
             (spells(words[0], "CHANGE") && (spells(words[1], "MASTER") || spells(words[1], "REPLICATION")));
  }
}

namespace {

// A literal the server reads as a boolean; anything else (an expression,
// DEFAULT, @v, a placeholder, '1', which the server refuses) is unknown.
AutocommitChange literalValue(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t' || value.front() == '\n')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\n')) value.remove_suffix(1);
  if (value == "1" || spells(value, "ON") || spells(value, "TRUE")) return AutocommitChange::kOn;
  if (value == "0" || spells(value, "OFF") || spells(value, "FALSE")) return AutocommitChange::kOff;
  if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front()) {
    const std::string_view inner = value.substr(1, value.size() - 2);
    if (spells(inner, "ON")) return AutocommitChange::kOn;
    if (spells(inner, "OFF")) return AutocommitChange::kOff;
  }
  return AutocommitChange::kUnknown;
}

}  // namespace

AutocommitChange autocommitChange(const StatementInfo& info) {
  if (info.kind != StatementKind::kSet || info.set_statement_for) return AutocommitChange::kNone;
  AutocommitChange change = AutocommitChange::kNone;
  for (const auto& setting : info.settings) {
    if (setting.kind == SessionSetting::Kind::kSystemVariable && setting.name == "autocommit") {
      change = literalValue(setting.value);
    }
  }
  return change;
}

}  // namespace sp::parser
