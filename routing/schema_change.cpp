#include "routing/schema_change.hpp"

#include "parser/lexer.hpp"

namespace sp::routing {

namespace {

using parser::Token;
using parser::TokenKind;

bool isName(const Token& t) { return t.kind == TokenKind::kIdentifier || t.kind == TokenKind::kQuotedIdentifier; }

std::string nameOf(const Token& t, std::string_view sql) {
  return t.kind == TokenKind::kQuotedIdentifier ? parser::unquoteIdentifier(t.text(sql)) : std::string(t.text(sql));
}

// A table name at tokens[i] (`t` or `db`.`t`): its last part and the token
// after it; nullopt when there is none.
struct NameAt {
  std::string table;
  uint32_t begin = 0, end = 0;
  size_t next = 0;
};
std::optional<NameAt> tableNameAt(const std::vector<Token>& tokens, size_t i, std::string_view sql) {
  if (i >= tokens.size() || !isName(tokens[i])) return std::nullopt;
  NameAt at{nameOf(tokens[i], sql), tokens[i].begin, tokens[i].end, i + 1};
  if (at.next + 1 < tokens.size() && tokens[at.next].is(TokenKind::kDot) && isName(tokens[at.next + 1])) {
    at.table = nameOf(tokens[at.next + 1], sql);
    at.end = tokens[at.next + 1].end;
    at.next += 2;
  }
  return at;
}

std::string_view trimmedStatement(std::string_view sql) {
  while (!sql.empty() && (sql.back() == ';' || sql.back() == ' ' || sql.back() == '\n' || sql.back() == '\t' ||
                          sql.back() == '\r')) {
    sql.remove_suffix(1);
  }
  return sql;
}

std::string refusalFor(std::string_view what, const std::string& table) {
  return "shardproxy: " + std::string(what) + " of sharded table " + table + " is not supported";
}

}  // namespace

std::string_view toString(LogicalDdlKind kind) {
  switch (kind) {
    case LogicalDdlKind::kAlterTable: return "ALTER TABLE";
    case LogicalDdlKind::kCreateIndex: return "CREATE INDEX";
    case LogicalDdlKind::kDropIndex: return "DROP INDEX";
    case LogicalDdlKind::kCreateTable: return "CREATE TABLE";
    case LogicalDdlKind::kTruncate: return "TRUNCATE";
  }
  return "?";
}

std::string_view toString(DdlAlgorithm algorithm) {
  switch (algorithm) {
    case DdlAlgorithm::kAsWritten: return "as written";
    case DdlAlgorithm::kInstant: return "INSTANT";
    case DdlAlgorithm::kInplaceNoLock: return "INPLACE, LOCK=NONE";
  }
  return "?";
}

std::optional<std::expected<LogicalDdl, std::string>> recognizeLogicalDdl(std::string_view whole,
                                                                          const CompiledShardMap& map,
                                                                          const parser::Dialect& dialect) {
  const std::string_view sql = trimmedStatement(whole);
  const std::vector<Token> tokens = parser::tokenize(sql, dialect);
  auto word = [&](size_t i, std::string_view w) { return i < tokens.size() && parser::tokenIsWord(tokens[i], sql, w); };
  if (tokens.size() < 3) return std::nullopt;
  LogicalDdl ddl;
  ddl.statement = std::string(sql);
  size_t i = 1;
  std::optional<NameAt> name;
  if (word(0, "ALTER")) {
    while (word(i, "ONLINE") || word(i, "IGNORE")) ++i;
    if (!word(i, "TABLE")) return std::nullopt;
    ++i;
    if (word(i, "IF") && word(i + 1, "EXISTS")) i += 2;
    name = tableNameAt(tokens, i, sql);
    ddl.kind = LogicalDdlKind::kAlterTable;
  } else if (word(0, "CREATE") || word(0, "DROP")) {
    const bool create = word(0, "CREATE");
    if (create && word(i, "OR") && word(i + 1, "REPLACE")) i += 2;
    while (word(i, "ONLINE") || word(i, "OFFLINE") || word(i, "UNIQUE") || word(i, "FULLTEXT") ||
           word(i, "SPATIAL") || word(i, "TEMPORARY")) {
      if (word(i, "TEMPORARY")) return std::nullopt;  // a session's own table, never the map's
      ++i;
    }
    if (word(i, "INDEX")) {
      // The table follows the first top-level ON.
      size_t on = i + 1;
      while (on < tokens.size() && !tokens[on].is(TokenKind::kEnd) && !word(on, "ON")) ++on;
      if (!word(on, "ON") || on == i + 1) return std::nullopt;
      name = tableNameAt(tokens, on + 1, sql);
      ddl.kind = create ? LogicalDdlKind::kCreateIndex : LogicalDdlKind::kDropIndex;
      if (!create) ddl.drop_index_clause = std::string(sql.substr(tokens[i].begin, tokens[on - 1].end - tokens[i].begin));
    } else if (word(i, "TABLE")) {
      ++i;
      if (word(i, "IF")) i += word(i + 1, "NOT") ? 3 : 2;
      name = tableNameAt(tokens, i, sql);
      if (!name || !map.findTable(name->table)) return std::nullopt;
      if (!create) {
        return std::unexpected(refusalFor("DROP TABLE", map.findTable(name->table)->name) +
                               ": drop its physical tables on their backends and remove it from the shard map");
      }
      ddl.kind = LogicalDdlKind::kCreateTable;
      if (word(name->next, "LIKE") || word(name->next, "AS") || word(name->next, "SELECT")) {
        return std::unexpected(refusalFor("CREATE TABLE ... LIKE / AS SELECT", map.findTable(name->table)->name) +
                               ": write the columns out (CREATE TABLE <name> (...))");
      }
    } else {
      return std::nullopt;
    }
  } else if (word(0, "TRUNCATE")) {
    if (word(i, "TABLE")) ++i;
    name = tableNameAt(tokens, i, sql);
    ddl.kind = LogicalDdlKind::kTruncate;
  } else if (word(0, "RENAME") && word(1, "TABLE")) {
    for (size_t k = 2; k < tokens.size(); ++k) {
      if (auto n = tableNameAt(tokens, k, sql); n && map.findTable(n->table)) {
        return std::unexpected(refusalFor("RENAME TABLE", map.findTable(n->table)->name) +
                               ": the shard map names its physical tables by the logical name");
      }
    }
    return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (!name) return std::nullopt;
  const TableRule* rule = map.findTable(name->table);
  if (rule == nullptr) return std::nullopt;
  ddl.table = rule->name;
  ddl.name_begin = name->begin;
  ddl.name_end = name->end;
  // What follows the name, at the top level of the statement.
  int depth = 0;
  for (size_t k = name->next; k < tokens.size() && !tokens[k].is(TokenKind::kEnd); ++k) {
    const Token& t = tokens[k];
    if (t.is(TokenKind::kLeftParen)) ++depth;
    if (t.is(TokenKind::kRightParen)) --depth;
    if (t.is(TokenKind::kSemicolon)) {
      return std::unexpected("shardproxy: a change of sharded table " + rule->name + " must be a statement of its own");
    }
    if (depth != 0) continue;
    if (ddl.kind == LogicalDdlKind::kAlterTable && (parser::tokenIsWord(t, sql, "RENAME"))) {
      return std::unexpected(refusalFor("ALTER TABLE ... RENAME", rule->name) +
                             ": the shard map names its physical tables by the logical name");
    }
    if (ddl.kind != LogicalDdlKind::kCreateTable &&
        (parser::tokenIsWord(t, sql, "PARTITION") || parser::tokenIsWord(t, sql, "PARTITIONING") || parser::tokenIsWord(t, sql, "PARTITIONS"))) {
      return std::unexpected(refusalFor("a partition change", rule->name) +
                             " here: partitions are managed by ADD PARTITIONS / DROP PARTITIONS on the admin port");
    }
    if (parser::tokenIsWord(t, sql, "ALGORITHM") || parser::tokenIsWord(t, sql, "LOCK")) {
      ddl.algorithm_given = true;
      size_t v = k + 1;
      if (v < tokens.size() && tokens[v].is(TokenKind::kEquals)) ++v;
      if (parser::tokenIsWord(t, sql, "ALGORITHM") && v < tokens.size() && parser::tokenIsWord(tokens[v], sql, "COPY")) ddl.copy = true;
    }
    // A second logical or physical table named (ALTER TABLE msg ... , RENAME ..., FOREIGN KEY ... REFERENCES).
    if (parser::tokenIsWord(t, sql, "REFERENCES")) {
      return std::unexpected(refusalFor("a foreign key", rule->name) +
                             ": rows of one key live on one shard, the referenced rows may not");
    }
  }
  if (ddl.kind == LogicalDdlKind::kTruncate || ddl.kind == LogicalDdlKind::kCreateTable) ddl.algorithm_given = false;
  return ddl;
}

std::vector<PhysicalTarget> physicalTargets(const LogicalDdl& ddl, const TableRule& rule) {
  std::vector<PhysicalTarget> out;
  const bool whole_rows = ddl.kind != LogicalDdlKind::kCreateTable;
  for (const auto& shard : rule.shards) {
    out.push_back({shard.backend, shard.physical_table, "shard"});
  }
  if (whole_rows) {
    for (const auto& shard : rule.shards) {
      if (!shard.archive_table.empty()) out.push_back({shard.backend, shard.archive_table, "archive"});
      if (!shard.backfill_table.empty()) out.push_back({shard.backend, shard.backfill_table, "backfill"});
    }
  }
  return out;
}

std::vector<DdlAlgorithm> algorithmsToTry(const LogicalDdl& ddl) {
  if (ddl.algorithm_given || ddl.kind == LogicalDdlKind::kCreateTable || ddl.kind == LogicalDdlKind::kTruncate) {
    return {DdlAlgorithm::kAsWritten};
  }
  return {DdlAlgorithm::kInstant, DdlAlgorithm::kInplaceNoLock};
}

std::string physicalStatement(const LogicalDdl& ddl, std::string_view physical, DdlAlgorithm algorithm) {
  if (ddl.kind == LogicalDdlKind::kDropIndex && algorithm != DdlAlgorithm::kAsWritten) {
    // The same change as ALTER TABLE, which takes the algorithm.
    LogicalDdl alter = ddl;
    alter.kind = LogicalDdlKind::kAlterTable;
    alter.statement = "ALTER TABLE t DROP " + ddl.drop_index_clause;
    alter.name_begin = 12;
    alter.name_end = 13;
    return physicalStatement(alter, physical, algorithm);
  }
  std::string out = ddl.statement.substr(0, ddl.name_begin);
  out += '`';
  for (char c : physical) {
    if (c == '`') out += '`';
    out += c;
  }
  out += '`';
  const std::string_view rest = std::string_view(ddl.statement).substr(ddl.name_end);
  out += rest;
  if (algorithm == DdlAlgorithm::kAsWritten) return out;
  const bool alter = ddl.kind == LogicalDdlKind::kAlterTable;
  bool nothing_after_name = true;
  for (char c : rest) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') nothing_after_name = false;
  }
  // ALTER TABLE's options are a comma-separated list; CREATE/DROP INDEX
  // take them separated by blanks.
  const char* separator = alter && !nothing_after_name ? ", " : " ";
  if (algorithm == DdlAlgorithm::kInstant) {
    out += separator;
    out += "ALGORITHM=INSTANT";
  } else {
    out += separator;
    out += alter ? "ALGORITHM=INPLACE, LOCK=NONE" : "ALGORITHM=INPLACE LOCK=NONE";
  }
  return out;
}

bool isAlgorithmRefusal(uint16_t error_code) { return error_code == 1845 || error_code == 1846; }

}  // namespace sp::routing
