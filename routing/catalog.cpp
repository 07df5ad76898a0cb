#include "routing/catalog.hpp"

#include <algorithm>
#include <array>

#include "parser/lexer.hpp"
#include "parser/text_search.hpp"

namespace sp::routing {

namespace {

using parser::Token;
using parser::TokenKind;

char upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

bool equalsUpper(std::string_view text, std::string_view upper_word) {
  return text.size() == upper_word.size() &&
         std::equal(text.begin(), text.end(), upper_word.begin(), [](char a, char b) { return upper(a) == b; });
}

bool isWord(const Token& t) { return t.is(TokenKind::kIdentifier) || t.is(TokenKind::kQuotedIdentifier); }

// A bare word spelling `w` (upper case).
bool spells(const Token& t, std::string_view sql, std::string_view w) {
  return t.is(TokenKind::kIdentifier) && equalsUpper(t.text(sql), w);
}

// Names spelling `w` bare or quoted (information_schema.`TABLES`), as the
// server matches information_schema table names (`STATİSTİCS` is STATISTICS
// to it: parser/text_search.hpp).
bool names(const Token& t, std::string_view sql, std::string_view w) {
  return isWord(t) && parser::equalsInformationSchemaName(parser::unquoteIdentifier(t.text(sql)), w);
}

// The information_schema tables whose rows name the session's tables.
constexpr std::array<std::string_view, 7> kCatalogTables = {
    "TABLES", "COLUMNS", "STATISTICS", "PARTITIONS", "KEY_COLUMN_USAGE", "TABLE_CONSTRAINTS", "VIEWS"};

struct Scan {
  std::string_view sql;
  std::vector<Token> tokens;  // without the final kEnd
  const Token& at(size_t i) const {
    static const Token kNone{};
    return i < tokens.size() ? tokens[i] : kNone;
  }
};

// The index of the last part of the (maybe qualified) name at `i`.
size_t lastPart(const Scan& s, size_t i) {
  while (s.at(i + 1).is(TokenKind::kDot) && isWord(s.at(i + 2))) i += 2;
  return i;
}

// SHOW CREATE TABLE t, DESCRIBE t: the statement with t pointed at the
// logical table's first physical table, on that table's backend.
std::optional<CatalogPlan> ofTable(const Scan& s, size_t name, const CompiledShardMap& map) {
  if (!isWord(s.at(name))) return std::nullopt;
  const size_t last = lastPart(s, name);
  const TableRule* rule = map.findTable(parser::unquoteIdentifier(s.at(last).text(s.sql)));
  if (!rule || rule->shards.empty()) return std::nullopt;
  const Shard& shard = rule->shards.front();
  const Token& t = s.at(last);
  std::string sql;
  sql.append(s.sql.substr(0, t.begin)).append("`").append(shard.physical_table).append("`");
  sql.append(s.sql.substr(t.end));
  CatalogPlan plan;
  plan.parts.push_back(CatalogPart{shard.backend, std::move(sql), true});
  return plan;
}

// Statements whose rows list tables: each backend that must be asked (the
// default one, which holds the unsharded tables, then one for each logical
// table without a physical table there), string literals naming a logical
// table pointed at its physical table on that backend, those naming a
// physical table emptied.
CatalogPlan listing(const Scan& s, const CompiledShardMap& map, std::string_view default_backend) {
  std::vector<std::string> backends{std::string(default_backend)};
  for (const auto& rule : map.tables()) {
    const bool on_default = std::any_of(rule.shards.begin(), rule.shards.end(),
                                        [&](const Shard& sh) { return sh.backend == default_backend; });
    if (on_default || rule.shards.empty()) continue;
    if (std::find(backends.begin(), backends.end(), rule.shards.front().backend) == backends.end()) {
      backends.push_back(rule.shards.front().backend);
    }
  }
  CatalogPlan plan;
  for (const auto& backend : backends) {
    std::string sql;
    size_t copied = 0;
    for (const Token& t : s.tokens) {
      if (!t.is(TokenKind::kString)) continue;
      const std::string value = parser::unquoteString(t.text(s.sql));
      if (map.findPhysical(value)) {
        // A physical table's name finds nothing, as its rows are hidden
        // (`COUNT(*) ... WHERE TABLE_NAME = 'msg_00'` is 0): no table is ''.
        sql.append(s.sql.substr(copied, t.begin - copied)).append("''");
        copied = t.end;
        continue;
      }
      const TableRule* rule = map.findTable(value);
      if (!rule) continue;
      auto shard = std::find_if(rule->shards.begin(), rule->shards.end(),
                                [&](const Shard& sh) { return sh.backend == backend; });
      if (shard == rule->shards.end()) continue;
      sql.append(s.sql.substr(copied, t.begin - copied)).append("'").append(shard->physical_table).append("'");
      copied = t.end;
    }
    sql.append(s.sql.substr(copied));
    plan.parts.push_back(CatalogPart{backend, std::move(sql), backend == default_backend});
  }
  return plan;
}

std::optional<CatalogPlan> planShow(const Scan& s, const CompiledShardMap& map, std::string_view default_backend) {
  const std::string_view sql = s.sql;
  size_t k = 1;
  while (spells(s.at(k), sql, "FULL") || spells(s.at(k), sql, "EXTENDED")) ++k;
  if (spells(s.at(k), sql, "CREATE") && spells(s.at(k + 1), sql, "TABLE")) return ofTable(s, k + 2, map);
  if (spells(s.at(k), sql, "COLUMNS") || spells(s.at(k), sql, "FIELDS") || spells(s.at(k), sql, "INDEX") ||
      spells(s.at(k), sql, "INDEXES") || spells(s.at(k), sql, "KEYS")) {
    if (spells(s.at(k + 1), sql, "FROM") || spells(s.at(k + 1), sql, "IN")) return ofTable(s, k + 2, map);
    return std::nullopt;
  }
  if (spells(s.at(k), sql, "TABLES") || (spells(s.at(k), sql, "TABLE") && spells(s.at(k + 1), sql, "STATUS"))) {
    CatalogPlan plan = listing(s, map, default_backend);
    for (size_t i = k; i + 1 < s.tokens.size(); ++i) {
      if (spells(s.tokens[i], sql, "LIKE") && s.tokens[i + 1].is(TokenKind::kString)) {
        plan.like = parser::unquoteString(s.tokens[i + 1].text(sql));
      }
    }
    return plan;
  }
  return std::nullopt;
}

bool namesCatalogTable(const Scan& s, size_t i) {
  for (auto table : kCatalogTables) {
    if (names(s.at(i), s.sql, table)) return true;
  }
  return false;
}

// information_schema.TABLES (...) anywhere; with information_schema as the
// default database, also a catalog table's bare name not qualified by
// another schema (a word of the same spelling elsewhere, a column or an
// alias, only makes the statement a listing, whose rows the filter reads
// by their column names).
bool readsCatalogTables(const Scan& s, bool in_information_schema) {
  for (size_t i = 0; i < s.tokens.size(); ++i) {
    if (names(s.tokens[i], s.sql, "INFORMATION_SCHEMA") && s.at(i + 1).is(TokenKind::kDot) &&
        namesCatalogTable(s, i + 2)) {
      return true;
    }
    if (in_information_schema && (i == 0 || !s.tokens[i - 1].is(TokenKind::kDot)) && namesCatalogTable(s, i)) {
      return true;
    }
  }
  return false;
}

// A column of a catalog result by its original name (the server's, whatever
// the alias) or, for SHOW results, by the name it is shown under.
std::string originalName(const protocol::ColumnDefinition41& c) { return c.org_name.empty() ? c.name : c.org_name; }

// A shard's cold table (`archive:` in the map, msg_archive_07): part of its
// logical table, whose reads it serves; never shown on its own.
bool isArchiveTable(const CompiledShardMap& map, std::string_view name) {
  for (const auto& rule : map.tables()) {
    if (rule.archive_template.empty()) continue;
    for (const auto& shard : rule.shards) {
      if (shard.archive_table.size() != name.size()) continue;
      if (std::equal(name.begin(), name.end(), shard.archive_table.begin(),
                     [](char a, char b) { return upper(a) == upper(b); })) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

bool isInformationSchemaDatabase(std::string_view database) {
  return parser::equalsInformationSchemaName(database, "INFORMATION_SCHEMA");
}

std::optional<CatalogPlan> planCatalog(std::string_view sql, const CompiledShardMap& map,
                                       std::string_view default_backend, const parser::Dialect& dialect,
                                       std::string_view session_database) {
  Scan s{sql, parser::tokenize(sql, dialect)};
  s.tokens.pop_back();  // kEnd
  while (!s.tokens.empty() && s.tokens.back().is(TokenKind::kSemicolon)) s.tokens.pop_back();
  if (s.tokens.empty()) return std::nullopt;
  for (const Token& t : s.tokens) {
    // One statement only; a text the lexer cannot read runs as written.
    if (t.is(TokenKind::kSemicolon) || t.isError()) return std::nullopt;
  }
  const Token& first = s.tokens.front();
  if (spells(first, sql, "SHOW")) return planShow(s, map, default_backend);
  if (spells(first, sql, "DESCRIBE") || spells(first, sql, "DESC") || spells(first, sql, "EXPLAIN")) {
    // DESCRIBE t [column]: the name, then at most one word or pattern.
    const size_t last = lastPart(s, 1);
    const size_t rest = s.tokens.size() - last - 1;
    if (rest == 0 || (rest == 1 && (isWord(s.at(last + 1)) || s.at(last + 1).is(TokenKind::kString)))) {
      return ofTable(s, 1, map);
    }
    return std::nullopt;
  }
  if ((spells(first, sql, "SELECT") || spells(first, sql, "WITH") || first.is(TokenKind::kLeftParen)) &&
      readsCatalogTables(s, isInformationSchemaDatabase(session_database))) {
    return listing(s, map, default_backend);
  }
  return std::nullopt;
}

CatalogRowFilter::CatalogRowFilter(const CompiledShardMap& map, AllowLists lists, std::string session_schema,
                                   std::optional<std::string> like)
    : map_(map), lists_(lists), session_schema_(std::move(session_schema)), like_(std::move(like)) {}

void CatalogRowFilter::setColumns(const std::vector<protocol::ColumnDefinition41>& columns) {
  name_columns_.clear();
  schema_column_.reset();
  ddl_column_.reset();
  std::vector<size_t> referenced;
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string original = originalName(columns[i]);
    const std::string& shown = columns[i].name;
    if (equalsUpper(original, "TABLE_NAME") || shown == "Table" || shown == "Name" || shown.starts_with("Tables_in_")) {
      name_columns_.push_back(i);
    } else if (equalsUpper(original, "REFERENCED_TABLE_NAME")) {
      referenced.push_back(i);
    } else if (equalsUpper(original, "TABLE_SCHEMA")) {
      if (!schema_column_) schema_column_ = i;
    } else if (shown == "Create Table") {
      ddl_column_ = i;
    }
  }
  name_columns_.insert(name_columns_.end(), referenced.begin(), referenced.end());
}

bool CatalogRowFilter::accept(std::vector<std::optional<std::string>>& row, bool primary_part) {
  if (name_columns_.empty() || name_columns_.front() >= row.size() || !row[name_columns_.front()]) return true;
  const std::string own = *row[name_columns_.front()];
  if (auto physical = map_.findPhysical(own)) {
    const std::string& logical = physical->table->name;
    if (like_ && !likeMatches(*like_, logical)) return false;
    auto [it, inserted] = shown_from_.try_emplace(logical, own);
    if (!inserted && it->second != own) return false;  // another physical table of a table already shown
    if (ddl_column_ && *ddl_column_ < row.size() && row[*ddl_column_]) {
      row[*ddl_column_] = logicalCreateTable(*row[*ddl_column_], own, logical);
    }
  } else if (map_.findTable(own) || !primary_part || isArchiveTable(map_, own)) {
    // A real table spelled like a logical one is never reached by the
    // application; the other backends' unsharded tables are not its tables;
    // archive tables are part of their logical table.
    return false;
  }
  for (size_t c : name_columns_) {
    if (c >= row.size() || !row[c]) continue;
    if (auto physical = map_.findPhysical(*row[c])) row[c] = physical->table->name;
  }
  if (lists_.restricts()) {
    std::string schema = session_schema_;
    if (schema_column_ && *schema_column_ < row.size() && row[*schema_column_]) schema = *row[*schema_column_];
    if (!tableAllowed(lists_, schema, *row[name_columns_.front()], nullptr)) return false;
  }
  return true;
}

std::string logicalCreateTable(std::string_view ddl, std::string_view physical, std::string_view logical) {
  std::string out(ddl);
  // The name comes first: `CREATE TABLE `msg_00` (` (or unquoted without sql_quote_show_create).
  const size_t name = out.find(physical);
  if (name != std::string::npos && name < 64) out.replace(name, physical.size(), logical);
  // The table option AUTO_INCREMENT=n is one shard's counter (a column's
  // AUTO_INCREMENT attribute has no '=').
  constexpr std::string_view kCounter = " AUTO_INCREMENT=";
  if (size_t at = out.find(kCounter); at != std::string::npos) {
    size_t end = at + kCounter.size();
    while (end < out.size() && out[end] >= '0' && out[end] <= '9') ++end;
    out.erase(at, end - at);
  }
  return out;
}

}  // namespace sp::routing
