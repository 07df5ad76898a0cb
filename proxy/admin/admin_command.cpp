#include "proxy/admin/admin_command.hpp"

#include <charconv>

#include <fmt/format.h>

#include "parser/lexer.hpp"
#include "proxy/ha/ha_command.hpp"
#include "proxy/lifecycle/lifecycle_command.hpp"
#include "proxy/move/move_command.hpp"
#include "proxy/admin/background_command.hpp"
#include "proxy/admin/limit_command.hpp"
#include "proxy/changes/changes_command.hpp"
#include "proxy/schema/schema_command.hpp"

namespace sp::proxy {

namespace {

using parser::Token;
using parser::TokenKind;

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The significant tokens of one command, without trailing ';' and kEnd.
class Words {
 public:
  Words(std::string_view sql, std::vector<Token> tokens) : sql_(sql), tokens_(std::move(tokens)) {
    while (!tokens_.empty() && (tokens_.back().is(TokenKind::kEnd) || tokens_.back().is(TokenKind::kSemicolon))) {
      tokens_.pop_back();
    }
  }
  size_t size() const { return tokens_.size(); }
  const Token& at(size_t i) const { return tokens_[i]; }
  std::string_view text(size_t i) const { return tokens_[i].text(sql_); }
  // True when tokens [0, words.size()) are exactly these bare words.
  bool startsWith(std::initializer_list<std::string_view> words) const {
    if (words.size() > tokens_.size()) return false;
    size_t i = 0;
    for (auto w : words) {
      if (!tokens_[i].is(TokenKind::kIdentifier) || !equalsIgnoreCase(text(i), w)) return false;
      ++i;
    }
    return true;
  }
  bool is(std::initializer_list<std::string_view> words) const {
    return words.size() == tokens_.size() && startsWith(words);
  }
  // Source text from token i to the last significant token.
  std::string_view rest(size_t i) const {
    if (i >= tokens_.size()) return {};
    return sql_.substr(tokens_[i].begin, tokens_.back().end - tokens_[i].begin);
  }

 private:
  std::string_view sql_;
  std::vector<Token> tokens_;
};

std::string unknownCommand(std::string_view sql) {
  std::string shown(sql.substr(0, 80));
  return "shardproxy admin: unknown command '" + shown +
         "'; commands: SHOW SHARD MAP [HISTORY|ERRORS], RELOAD SHARD MAP, ROLLBACK SHARD MAP TO <version>, "
         "SHOW FLEET, SHOW BACKENDS, SHOW SESSIONS, SHOW OVERLOAD, SHOW TRANSACTIONS, SHOW HOT KEYS [LIMIT n], SHOW ROUTE <statement>, SHOW DIGESTS [LIMIT n], RESET DIGESTS, SHOW STATS, SHOW SCHEMA DRIFT, SHOW SCHEMA CHANGES, RETRY SCHEMA CHANGE <id>, SHOW TOPOLOGY, SWITCHOVER / FAILOVER / REJOIN BACKEND ..., HELP";
}

// SELECT @@var | name() [, ...] [LIMIT n]
std::expected<AdminCommand, std::string> parseSelect(const Words& w, std::string_view sql) {
  AdminCommand cmd;
  cmd.kind = AdminCommandKind::kSelectVariables;
  size_t i = 1;
  size_t end = w.size();
  if (end >= 3 && w.at(end - 2).isKeyword(parser::Keyword::kLIMIT) && w.at(end - 1).is(TokenKind::kInteger)) end -= 2;
  while (i < end) {
    const Token& t = w.at(i);
    if (t.is(TokenKind::kSystemVariable)) {
      std::string name = lower(w.text(i).substr(2));
      for (std::string_view scope : {"session.", "global.", "local."}) {
        if (name.starts_with(scope)) name.erase(0, scope.size());
      }
      cmd.items.push_back({std::string(w.text(i)), std::move(name)});
      i += 1;
    } else if (t.is(TokenKind::kIdentifier) && i + 2 < end && w.at(i + 1).is(TokenKind::kLeftParen) &&
               w.at(i + 2).is(TokenKind::kRightParen)) {
      std::string label = std::string(w.text(i)) + "()";
      cmd.items.push_back({label, lower(label)});
      i += 3;
    } else {
      return std::unexpected(unknownCommand(sql));
    }
    if (i < end) {
      if (!w.at(i).is(TokenKind::kComma)) return std::unexpected(unknownCommand(sql));
      ++i;
    }
  }
  if (cmd.items.empty()) return std::unexpected(unknownCommand(sql));
  return cmd;
}

// SHOW DIGESTS [LIMIT n], SHOW HOT KEYS [LIMIT n]; `words` is how many
// words name the command, `name` how the usage message spells it.
std::expected<AdminCommand, std::string> parseShowWithLimit(const Words& w, size_t words, AdminCommandKind kind,
                                                            std::string_view name) {
  AdminCommand cmd;
  cmd.kind = kind;
  if (w.size() == words) return cmd;
  if (w.size() != words + 2 || !w.at(words).isKeyword(parser::Keyword::kLIMIT) || !w.at(words + 1).is(TokenKind::kInteger)) {
    return std::unexpected(fmt::format("shardproxy admin: expected {} [LIMIT n]", name));
  }
  auto digits = w.text(words + 1);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cmd.limit);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || cmd.limit == 0) {
    return std::unexpected("shardproxy admin: LIMIT must be a positive number");
  }
  return cmd;
}

std::expected<AdminCommand, std::string> parseRollback(const Words& w, std::string_view sql) {
  // ROLLBACK SHARD MAP TO <version>
  if (w.size() != 5 || !w.at(4).is(TokenKind::kInteger)) {
    return std::unexpected("shardproxy admin: expected ROLLBACK SHARD MAP TO <version> (a version from SHOW SHARD "
                           "MAP HISTORY), got '" + std::string(sql.substr(0, 80)) + "'");
  }
  auto digits = w.text(4);
  AdminCommand cmd;
  cmd.kind = AdminCommandKind::kRollbackShardMap;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cmd.version);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    return std::unexpected("shardproxy admin: version '" + std::string(digits) + "' is out of range");
  }
  return cmd;
}

AdminCommand simple(AdminCommandKind kind) {
  AdminCommand cmd;
  cmd.kind = kind;
  return cmd;
}

}  // namespace

std::expected<AdminCommand, std::string> parseAdminCommand(std::string_view sql) {
  Words w(sql, parser::tokenize(sql));
  if (w.size() == 0) return simple(AdminCommandKind::kEmpty);
  for (size_t i = 0; i < w.size(); ++i) {
    if (w.at(i).isError()) {
      return std::unexpected("shardproxy admin: cannot read the command at offset " +
                             std::to_string(w.at(i).begin) + " (" +
                             std::string(parser::tokenKindName(w.at(i).kind)) + ")");
    }
  }
  using K = AdminCommandKind;
  if (w.is({"show", "shard", "map"})) return simple(K::kShowShardMap);
  if (w.is({"show", "shard", "map", "history"})) return simple(K::kShowShardMapHistory);
  if (w.is({"show", "shard", "map", "errors"})) return simple(K::kShowShardMapErrors);
  if (w.is({"reload", "shard", "map"})) return simple(K::kReloadShardMap);
  if (w.startsWith({"rollback", "shard", "map", "to"})) return parseRollback(w, sql);
  if (w.is({"show", "backends"})) return simple(K::kShowBackends);
  if (w.is({"show", "fleet"})) return simple(K::kShowFleet);
  if (w.is({"show", "sessions"})) return simple(K::kShowSessions);
  if (w.is({"show", "overload"})) return simple(K::kShowOverload);
  if (w.is({"show", "transactions"})) return simple(K::kShowTransactions);
  if (w.is({"help"})) return simple(K::kHelp);
  if (w.startsWith({"show", "digests"})) return parseShowWithLimit(w, 2, K::kShowDigests, "SHOW DIGESTS");
  if (w.startsWith({"show", "query", "digest"})) return parseShowWithLimit(w, 3, K::kShowDigests, "SHOW DIGESTS");
  if (w.startsWith({"show", "hot", "keys"})) return parseShowWithLimit(w, 3, K::kShowHotKeys, "SHOW HOT KEYS");
  if (w.is({"show", "stats"})) return simple(K::kShowStats);
  if (w.is({"show", "schema", "drift"})) return simple(K::kShowSchemaDrift);
  if (w.is({"reset", "digests"}) || w.is({"reset", "query", "digest"})) return simple(K::kResetDigests);
  if (w.startsWith({"show", "route"})) {
    if (w.size() < 3) return std::unexpected("shardproxy admin: expected SHOW ROUTE <statement>");
    AdminCommand cmd = simple(K::kShowRoute);
    cmd.statement = std::string(w.rest(2));
    return cmd;
  }
  if (w.startsWith({"select"})) return parseSelect(w, sql);
  if (w.startsWith({"set"})) return simple(K::kIgnoredSet);
  if (w.startsWith({"use"}) && w.size() == 2) return simple(K::kUse);
  return std::unexpected(unknownCommand(sql));
}

std::vector<std::pair<std::string, std::string>> adminCommandHelp() {
  auto help = std::vector<std::pair<std::string, std::string>>{
      {"SHOW SHARD MAP", "the map in force: one row per shard (version, checksum, table, shard, buckets, backend, hot keys)"},
      {"SHOW SHARD MAP HISTORY", "every map applied, newest first, from the SQLite cache"},
      {"SHOW SHARD MAP ERRORS", "the problems of the last refused RELOAD or ROLLBACK"},
      {"RELOAD SHARD MAP", "re-read the config's backends and the map file; validate; swap atomically"},
      {"ROLLBACK SHARD MAP TO <version>", "re-apply a cached version (validated again; may be lower)"},
      {"SHOW FLEET", "the proxies of the fleet (fleet: in the config), the map version each serves and since when"},
      {"SHOW BACKENDS", "backend pools summed over worker threads"},
      {"SHOW SESSIONS", "client sessions, in transaction, statements served"},
      {"SHOW OVERLOAD", "every server's concurrency budget (max_active_statements): in flight, waiting, waits, refusals"},
      {"SHOW TRANSACTIONS", "global (cross-backend, XA) transactions open now with their phase and age, and branches in doubt"},
      {"SHOW HOT KEYS [LIMIT <n>]", "the busiest shard-key values: statements/s, writes/s, share of their shard, writes serialised now"},
      {"SHOW ROUTE <statement>", "where a statement would go (same rows as EXPLAIN SHARDS on the client port)"},
      {"SHOW DIGESTS [LIMIT <n>]", "statistics per normalized statement, largest total time first"},
      {"RESET DIGESTS", "forget every query digest"},
      {"SHOW STATS", "the /metrics series (counters, gauges, histogram sums and counts), one row each"},
      {"SHOW SCHEMA DRIFT", "physical tables whose columns or indexes differ from their logical table's first one, on every backend"},
      {"HELP", "this list"},
  };
  for (auto& line : lifecycleCommandHelp()) help.push_back(std::move(line));
  for (auto& line : moveCommandHelp()) help.push_back(std::move(line));
  for (auto& line : haCommandHelp()) help.push_back(std::move(line));
  for (auto& line : schemaCommandHelp()) help.push_back(std::move(line));
  for (auto& line : backgroundCommandHelp()) help.push_back(std::move(line));
  for (auto& line : limitCommandHelp()) help.push_back(std::move(line));
  for (auto& line : changes::changesCommandHelp()) help.push_back(std::move(line));
  return help;
}

}  // namespace sp::proxy
