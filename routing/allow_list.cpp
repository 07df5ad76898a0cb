#include "routing/allow_list.hpp"

#include <algorithm>

#include "parser/lexer.hpp"
#include "parser/table_positions.hpp"

namespace sp::routing {

namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool isInformationSchema(std::string_view schema) { return globMatches("information_schema", schema); }

// The privilege MariaDB names when a statement of this verb lacks it on a
// table: the written table of INSERT / UPDATE / DELETE, SELECT for what
// they read, the DDL's own word.
std::string commandFor(const parser::TableReference& ref) {
  const std::string& v = ref.verb;
  if (v == "SHOW CREATE") return "SHOW";
  if (v == "INSERT" || v == "REPLACE") return ref.first ? "INSERT" : "SELECT";
  if (v == "UPDATE" || v == "DELETE") return ref.first ? v : "SELECT";
  if (v == "CREATE" || v == "ALTER") return ref.first ? v : "SELECT";
  if (v == "DROP" || v == "TRUNCATE") return "DROP";
  if (v == "RENAME") return "ALTER";
  if (v == "LOCK") return "LOCK TABLES";
  return "SELECT";
}

// Names a statement defines for itself: common table expressions
// (`WITH c AS (`, `, c (x, y) AS (`), which FROM may then name.
std::vector<std::string> definedNames(std::string_view sql, const parser::Dialect& dialect) {
  using parser::TokenKind;
  const auto tokens = parser::tokenize(sql, dialect);
  auto word = [&](size_t k) {
    return k < tokens.size() && (tokens[k].is(TokenKind::kIdentifier) || tokens[k].is(TokenKind::kQuotedIdentifier));
  };
  auto spellsAs = [&](size_t k) {
    if (k >= tokens.size() || !tokens[k].is(TokenKind::kIdentifier)) return false;
    auto text = tokens[k].text(sql);
    return text.size() == 2 && lower(text[0]) == 'a' && lower(text[1]) == 's';
  };
  std::vector<std::string> names;
  auto spellsWord = [&](size_t k, std::string_view w) {
    if (!tokens[k].is(TokenKind::kIdentifier)) return false;
    auto text = tokens[k].text(sql);
    return text.size() == w.size() && std::equal(text.begin(), text.end(), w.begin(),
                                                 [](char a, char b) { return lower(a) == b; });
  };
  for (size_t i = 1; i + 2 < tokens.size(); ++i) {
    // WITH [RECURSIVE] c AS (...), d AS (...)
    if (!word(i) || !(tokens[i - 1].is(TokenKind::kComma) || spellsWord(i - 1, "with") ||
                      spellsWord(i - 1, "recursive"))) {
      continue;
    }
    size_t k = i + 1;
    if (tokens[k].is(TokenKind::kLeftParen)) {  // a column list
      while (k < tokens.size() && !tokens[k].is(TokenKind::kRightParen) && !tokens[k].is(TokenKind::kEnd)) ++k;
      ++k;
    }
    if (spellsAs(k) && k + 1 < tokens.size() && tokens[k + 1].is(TokenKind::kLeftParen)) {
      names.push_back(parser::unquoteIdentifier(tokens[i].text(sql)));
    }
  }
  return names;
}

}  // namespace

namespace {

// Wildcard matching with one backtrack point (enough for names): `many`
// matches any run, `one` (when set) any one character, `\` escapes when
// `escapes`.
bool wildcardMatches(std::string_view pattern, std::string_view text, char many, char one, bool escapes) {
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == many) {
      star = p++;
      mark = t;
      continue;
    }
    if (p < pattern.size()) {
      const bool escaped = escapes && pattern[p] == '\\' && p + 1 < pattern.size();
      const char want = escaped ? pattern[p + 1] : pattern[p];
      if ((!escaped && one && want == one) || lower(want) == lower(text[t])) {
        p += escaped ? 2 : 1;
        ++t;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    p = star + 1;
    t = ++mark;
  }
  while (p < pattern.size() && pattern[p] == many) ++p;
  return p == pattern.size();
}

}  // namespace

bool globMatches(std::string_view pattern, std::string_view text) {
  return wildcardMatches(pattern, text, '*', '\0', false);
}

bool likeMatches(std::string_view pattern, std::string_view text) {
  return wildcardMatches(pattern, text, '%', '_', true);
}

bool schemaAllowed(const AllowLists& lists, std::string_view schema) {
  if (!lists.schemas || isInformationSchema(schema)) return true;
  for (const auto& pattern : *lists.schemas) {
    if (globMatches(pattern, schema)) return true;
  }
  return false;
}

bool tableAllowed(const AllowLists& lists, std::string_view schema, std::string_view table,
                  const CompiledShardMap* map) {
  if (!schemaAllowed(lists, schema)) return false;
  if (!lists.tables || isInformationSchema(schema)) return true;
  std::string_view name = table;
  std::optional<PhysicalTableRef> physical;
  if (map && (physical = map->findPhysical(table))) name = physical->table->name;
  for (const auto& pattern : *lists.tables) {
    const size_t dot = pattern.find('.');
    if (dot == std::string::npos) {
      if (globMatches(pattern, name)) return true;
    } else if (globMatches(std::string_view(pattern).substr(0, dot), schema) &&
               globMatches(std::string_view(pattern).substr(dot + 1), name)) {
      return true;
    }
  }
  return false;
}

std::optional<AllowDenial> checkAllowLists(std::string_view sql, const AllowLists& lists,
                                           std::string_view session_database, const CompiledShardMap* map,
                                           const parser::Dialect& dialect) {
  if (!lists.restricts()) return std::nullopt;
  std::vector<std::string> defined;
  bool defined_read = false;
  for (const auto& ref : parser::tableReferences(sql, dialect)) {
    const std::string schema = ref.schema.empty() ? std::string(session_database) : ref.schema;
    if (ref.name.empty()) {
      // A schema alone (USE db, SHOW TABLES FROM db): MariaDB's 1044.
      if (!schemaAllowed(lists, schema)) return AllowDenial{true, "", schema, ""};
      continue;
    }
    // A table of a schema outside the list is a table without the grant: 1142, as MariaDB says.
    if (!tableAllowed(lists, schema, ref.name, map)) {
      if (ref.schema.empty()) {
        if (!defined_read) defined = definedNames(sql, dialect), defined_read = true;
        if (std::any_of(defined.begin(), defined.end(), [&](const auto& n) { return globMatches(n, ref.name); })) {
          continue;
        }
      }
      return AllowDenial{false, commandFor(ref), schema, ref.name};
    }
  }
  return std::nullopt;
}

}  // namespace sp::routing
