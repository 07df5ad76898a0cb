#include "parser/table_positions.hpp"

#include <array>
#include <cctype>

#include "parser/lexer.hpp"

namespace sp::parser {

namespace {

bool isWord(const Token& t) { return t.is(TokenKind::kIdentifier) || t.is(TokenKind::kQuotedIdentifier); }

// A bare word spelling `w` (upper case); quoted identifiers never match.
bool spells(const Token& t, std::string_view sql, std::string_view w) {
  if (!t.is(TokenKind::kIdentifier)) return false;
  std::string_view text = t.text(sql);
  if (text.size() != w.size()) return false;
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(text[i])) != w[i]) return false;
  }
  return true;
}

template <size_t N>
bool spellsAny(const Token& t, std::string_view sql, const std::array<std::string_view, N>& words) {
  for (auto w : words) {
    if (spells(t, sql, w)) return true;
  }
  return false;
}

// Words that start a table position (each may be followed by a comma list).
constexpr std::array<std::string_view, 5> kListStarts = {"FROM", "JOIN", "STRAIGHT_JOIN", "TABLE", "TABLES"};
// Words that may stand between a list start and the name without ending it.
constexpr std::array<std::string_view, 8> kBeforeName = {"IF", "NOT", "EXISTS", "LOW_PRIORITY", "IGNORE",
                                                         "TEMPORARY", "ONLY", "TABLE"};
// Words that may follow a name in a list without ending the list (alias,
// lock type, RENAME's TO).
constexpr std::array<std::string_view, 6> kInList = {"AS", "READ", "WRITE", "LOCAL", "LOW_PRIORITY", "TO"};
// What may precede INTO for it to name a table.
constexpr std::array<std::string_view, 6> kInsertVerbs = {"INSERT", "REPLACE", "IGNORE",
                                                          "LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY"};
// What may follow the name after ON for ON to name a table.
constexpr std::array<std::string_view, 3> kAfterOnName = {"FOR", "TO", "FROM"};

struct Level {
  bool in_list = false;  // a comma at this depth starts another name
  bool expect = false;   // the next word is a name
};

std::string upperWord(const Token& t, std::string_view sql) {
  std::string word(t.text(sql));
  for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return word;
}

// What SHOW names (SHOW is one statement; its FROM / IN may name a schema):
// SHOW [FULL|EXTENDED] COLUMNS|FIELDS|INDEX|INDEXES|KEYS FROM t [FROM db],
// SHOW CREATE TABLE|VIEW t, SHOW CREATE DATABASE|SCHEMA db,
// SHOW [FULL] TABLES | TABLE STATUS | OPEN TABLES | TRIGGERS | EVENTS FROM db.
// `take(i, schema_only)` records the name at tokens[i]; returns the end.
template <class Take>
size_t scanShow(const std::vector<Token>& tokens, std::string_view sql, size_t i, Take take) {
  auto at = [&](size_t k) -> const Token& { return tokens[k < tokens.size() ? k : tokens.size() - 1]; };
  auto fromOrIn = [&](size_t k) { return spells(at(k), sql, "FROM") || spells(at(k), sql, "IN"); };
  size_t k = i + 1;
  while (spells(at(k), sql, "FULL") || spells(at(k), sql, "EXTENDED")) ++k;
  if (spells(at(k), sql, "CREATE")) {
    ++k;
    if ((spells(at(k), sql, "TABLE") || spells(at(k), sql, "VIEW")) && isWord(at(k + 1))) return take(k + 1, false);
    if ((spells(at(k), sql, "DATABASE") || spells(at(k), sql, "SCHEMA")) && isWord(at(k + 1))) {
      while (spells(at(k + 1), sql, "IF") || spells(at(k + 1), sql, "NOT") || spells(at(k + 1), sql, "EXISTS")) ++k;
      return take(k + 1, true);
    }
    return k;
  }
  const bool of_table = spells(at(k), sql, "COLUMNS") || spells(at(k), sql, "FIELDS") ||
                        spells(at(k), sql, "INDEX") || spells(at(k), sql, "INDEXES") || spells(at(k), sql, "KEYS");
  const bool of_schema = spells(at(k), sql, "TABLES") || spells(at(k), sql, "TABLE") || spells(at(k), sql, "OPEN") ||
                         spells(at(k), sql, "TRIGGERS") || spells(at(k), sql, "EVENTS");
  if (!of_table && !of_schema) return k;
  while (k < tokens.size() && isWord(at(k)) && !fromOrIn(k)) ++k;
  if (!fromOrIn(k) || !isWord(at(k + 1))) return k;
  k = take(k + 1, of_schema);
  if (of_table && fromOrIn(k + 1) && isWord(at(k + 2))) k = take(k + 2, true);
  return k;
}

void scanTables(std::string_view sql, const Dialect& dialect, std::vector<TableReference>& refs) {
  const std::vector<Token> tokens = tokenize(sql, dialect);
  std::vector<Level> levels(1);
  bool after_name = false;  // the previous significant token ended a name
  size_t statement_start = 0;
  size_t statement_refs = 0;  // refs.size() when the statement started

  // The name at tokens[i] (qualified or not): returns the index of its last part.
  auto takeQualified = [&](size_t i, bool schema_only) -> size_t {
    size_t last = i;
    while (last + 2 < tokens.size() && tokens[last + 1].is(TokenKind::kDot) && isWord(tokens[last + 2])) last += 2;
    if (last + 2 < tokens.size() && tokens[last + 1].is(TokenKind::kDot) && tokens[last + 2].is(TokenKind::kStar)) {
      return last + 2;  // db.* (a database, not a table)
    }
    TableReference ref;
    if (schema_only) {
      ref.schema = unquoteIdentifier(tokens[last].text(sql));
    } else {
      ref.name = unquoteIdentifier(tokens[last].text(sql));
      if (last > i) ref.schema = unquoteIdentifier(tokens[last - 2].text(sql));
    }
    ref.verb = isWord(tokens[statement_start]) ? upperWord(tokens[statement_start], sql) : std::string();
    ref.first = refs.size() == statement_refs;
    refs.push_back(std::move(ref));
    return last;
  };
  auto takeName = [&](size_t i) { return takeQualified(i, false); };

  for (size_t i = 0; i < tokens.size() && !tokens[i].is(TokenKind::kEnd); ++i) {
    const Token& t = tokens[i];
    Level& level = levels.back();
    const bool was_after_name = after_name;
    after_name = false;

    if (t.is(TokenKind::kSemicolon)) {
      levels.assign(1, Level{});
      statement_start = i + 1;
      statement_refs = refs.size();
      continue;
    }
    if (i == statement_start && spells(t, sql, "SHOW")) {
      const size_t before = refs.size();
      const bool show_create = i + 1 < tokens.size() && spells(tokens[i + 1], sql, "CREATE");
      i = scanShow(tokens, sql, i, takeQualified);
      // MariaDB names the privilege SHOW for SHOW CREATE TABLE, SELECT for SHOW COLUMNS / INDEX.
      if (show_create && refs.size() > before) refs.back().verb = "SHOW CREATE";
      continue;
    }
    if (i == statement_start && spells(t, sql, "USE") && i + 1 < tokens.size() && isWord(tokens[i + 1])) {
      i = takeQualified(i + 1, true);
      continue;
    }
    if (i == statement_start && (spells(t, sql, "INSERT") || spells(t, sql, "REPLACE"))) {
      // INSERT [modifiers] t ...: INTO is optional.
      size_t j = i + 1;
      while (j < tokens.size() && spellsAny(tokens[j], sql, kInsertVerbs)) ++j;
      if (j < tokens.size() && isWord(tokens[j]) && !spells(tokens[j], sql, "INTO")) {
        i = takeName(j);
        after_name = true;
        continue;
      }
    }
    if (t.is(TokenKind::kLeftParen)) {
      level.expect = false;
      levels.push_back(Level{});
      continue;
    }
    if (t.is(TokenKind::kRightParen)) {
      if (levels.size() > 1) levels.pop_back();
      continue;
    }
    if (t.is(TokenKind::kComma)) {
      if (level.in_list) level.expect = true;
      continue;
    }
    if (!isWord(t)) {
      level.in_list = level.expect = false;
      continue;
    }

    if (level.expect) {
      if (spellsAny(t, sql, kBeforeName)) continue;
      level.expect = false;
      i = takeName(i);
      after_name = true;
      continue;
    }
    if (spellsAny(t, sql, kListStarts)) {
      level.in_list = level.expect = true;
      continue;
    }
    if (spells(t, sql, "UPDATE")) {
      // Not ON DUPLICATE KEY UPDATE, not SELECT ... FOR UPDATE.
      bool clause = i > statement_start && (spells(tokens[i - 1], sql, "KEY") || spells(tokens[i - 1], sql, "FOR"));
      level.in_list = level.expect = !clause;
      continue;
    }
    if (spells(t, sql, "INTO")) {
      bool insert = i > statement_start && spellsAny(tokens[i - 1], sql, kInsertVerbs);
      level.in_list = level.expect = insert;
      continue;
    }
    if (spells(t, sql, "REFERENCES") || spells(t, sql, "TRUNCATE")) {
      level.in_list = false;
      level.expect = true;
      continue;
    }
    if ((spells(t, sql, "DESCRIBE") || spells(t, sql, "DESC") || spells(t, sql, "EXPLAIN")) && i == statement_start) {
      level.in_list = false;
      level.expect = true;
      continue;
    }
    // RENAME TABLE a TO b / ALTER TABLE a RENAME TO b, not GRANT ... ON t TO user.
    const bool renaming = spells(tokens[statement_start], sql, "RENAME") || spells(tokens[statement_start], sql, "ALTER");
    if (((spells(t, sql, "TO") && renaming) || spells(t, sql, "LIKE")) && was_after_name) {
      level.expect = true;
      continue;
    }
    if (spells(t, sql, "RENAME")) {
      size_t j = i + 1;
      if (j < tokens.size() && (spells(tokens[j], sql, "TO") || spells(tokens[j], sql, "AS"))) ++j;
      if (j < tokens.size() && isWord(tokens[j]) && !spells(tokens[j], sql, "TABLE") &&
          !spells(tokens[j], sql, "COLUMN") && !spells(tokens[j], sql, "INDEX") && !spells(tokens[j], sql, "KEY") &&
          !spells(tokens[j], sql, "USER")) {
        i = takeName(j);
        after_name = true;
      }
      continue;
    }
    if (spells(t, sql, "ON")) {
      size_t j = i + 1;
      if (j < tokens.size() && spells(tokens[j], sql, "TABLE")) ++j;
      if (j < tokens.size() && isWord(tokens[j])) {
        size_t last = j;
        while (last + 2 < tokens.size() && tokens[last + 1].is(TokenKind::kDot) && isWord(tokens[last + 2])) {
          last += 2;
        }
        const Token& next = tokens[last + 1 < tokens.size() ? last + 1 : last];
        if (next.is(TokenKind::kLeftParen) || next.is(TokenKind::kEnd) || next.is(TokenKind::kSemicolon) ||
            spellsAny(next, sql, kAfterOnName)) {
          i = takeName(j);
          after_name = true;
        }
      }
      level.in_list = false;
      continue;
    }
    if (level.in_list && (t.keyword == Keyword::kNone || t.is(TokenKind::kQuotedIdentifier) ||
                          spellsAny(t, sql, kInList))) {
      continue;  // an alias, AS, a lock type: the list goes on
    }
    level.in_list = false;
  }
}

}  // namespace

std::vector<TableReference> tableReferences(std::string_view sql, const Dialect& dialect) {
  std::vector<TableReference> refs;
  scanTables(sql, dialect, refs);
  return refs;
}

std::vector<std::string> tableNamePositions(std::string_view sql, const Dialect& dialect) {
  std::vector<std::string> names;
  for (auto& ref : tableReferences(sql, dialect)) {
    if (!ref.name.empty()) names.push_back(std::move(ref.name));
  }
  return names;
}

}  // namespace sp::parser
