#include "proxy/backend/session_state.hpp"

#include "parser/dialect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>

namespace sp::proxy {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Quoted or unquoted charset names compare equal ('utf8mb4' == utf8mb4).
std::string canonicalCharset(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\'' || c == '"' || c == '`') continue;
    out += char(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

struct CollationName {
  uint8_t id;
  const char* names;
};

// Common collation ids sent in handshakes by real clients.
constexpr CollationName kCollations[] = {
    {8, "latin1"},
    {33, "utf8"},
    {45, "utf8mb4"},
    {46, "utf8mb4 collate utf8mb4_bin"},
    {47, "latin1 collate latin1_bin"},
    {63, "binary"},
    {83, "utf8 collate utf8_bin"},
    {192, "utf8 collate utf8_unicode_ci"},
    {224, "utf8mb4 collate utf8mb4_unicode_ci"},
    {28, "gbk"},
    {24, "gb2312"},
    {11, "ascii"},
};

// Variables whose value is tied to one connection or to the proxy's own use
// of it: replaying them elsewhere would be wrong (a stale insert_id) or would
// blind the proxy (session tracking switched off). last_gtid is read-only
// (MariaDB tracks it by default once the server writes a binlog: replaying
// it failed every later statement with 1238).
constexpr std::string_view kConnectionBoundVariables[] = {
    "insert_id", "last_insert_id", "identity", "rand_seed1", "rand_seed2", "last_gtid",
    "session_track_system_variables", "session_track_schema", "session_track_state_change",
    "session_track_transaction_info", "session_track_user_variables",
};

// Read-only variables the server reports as a side effect of a statement,
// not as a change of the session's settings: neither carried (a SET of them
// fails with 1238) nor a reason to keep the connection. last_gtid: with the
// binary log on (online moves), every commit reports the GTID it wrote; a
// session reading @@last_gtid after its connection went back to the pool
// may see another connection's value.
constexpr std::string_view kReportedOnlyVariables[] = {"last_gtid"};

bool isNumber(std::string_view v) {
  if (v.empty()) return false;
  size_t i = v[0] == '-' ? 1 : 0;
  bool digits = false, dot = false;
  for (; i < v.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(v[i]))) digits = true;
    else if (v[i] == '.' && !dot) dot = true;
    else return false;
  }
  return digits;
}

}  // namespace

// The literal that sets `name` back to the reported `value`: numbers as they
// are (numeric variables refuse strings), NULL for an empty
// character_set_results, everything else quoted. nullopt when the value
// cannot be written the same way under every sql_mode (a backslash).
std::optional<std::string> replayLiteral(std::string_view name, std::string_view value) {
  if (isNumber(value)) return std::string(value);
  if (value.empty() && name == "character_set_results") return std::string("NULL");
  if (value.find('\\') != std::string_view::npos) return std::nullopt;
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
  return out;
}

TrackedAdoption adoptTrackedChanges(const protocol::SessionChanges& changes, bool set_or_use, SessionState& desired,
                                    SessionState& applied) {
  bool carried = true;
  bool explained = changes.schema_changed;
  for (const auto& v : changes.variables) {
    std::string name = lower(v.name);
    if (std::find(std::begin(kReportedOnlyVariables), std::end(kReportedOnlyVariables), name) !=
        std::end(kReportedOnlyVariables)) {
      continue;
    }
    explained = true;
    auto bound = std::find(std::begin(kConnectionBoundVariables), std::end(kConnectionBoundVariables), name);
    auto literal = replayLiteral(name, v.value);
    if (bound != std::end(kConnectionBoundVariables) || !literal) {
      carried = false;
      continue;
    }
    desired.variables[name] = *literal;
    applied.variables[name] = std::move(*literal);
  }
  if (changes.schema_changed) {
    desired.database = changes.schema;
    applied.database = changes.schema;
  }
  if (!carried) return TrackedAdoption::kUncarriedVariable;
  if (changes.state_changed && (!set_or_use || !explained)) return TrackedAdoption::kStateChanged;
  return TrackedAdoption::kCarried;
}

void carryAutocommit(bool on, bool default_on, SessionState& desired, SessionState& applied) {
  if (on == default_on && !desired.variables.contains("autocommit")) return;
  desired.variables["autocommit"] = on ? "1" : "0";
  applied.variables["autocommit"] = on ? "1" : "0";
}

bool SessionState::apply(const parser::SessionSetting& s) {
  using Kind = parser::SessionSetting::Kind;
  switch (s.kind) {
    case Kind::kSystemVariable:
      variables[lower(s.name)] = s.value;
      return true;
    case Kind::kNames:
      names = canonicalCharset(s.value);
      // SET NAMES also resets what SET CHARACTER SET changed.
      character_set.clear();
      return true;
    case Kind::kCharacterSet:
      character_set = canonicalCharset(s.value);
      return true;
    case Kind::kSessionIsolation:
      isolation = s.value;
      return true;
    case Kind::kGlobalVariable:
    case Kind::kUserVariable:
    case Kind::kNextTransaction:
      return false;
  }
  return false;
}

namespace {
// Variables SET NAMES / SET CHARACTER SET set: a DEFAULT for them means the
// server's global value, not the session's character set.
bool isCharsetVariable(std::string_view name) {
  return name == "character_set_client" || name == "character_set_connection" || name == "character_set_results" ||
         name == "collation_connection";
}
}  // namespace

std::vector<std::string> syncStatements(const SessionState& desired, const SessionState& applied) {
  std::vector<std::string> out;
  auto assign = [](std::string& statement, const std::string& name, const std::string& value) {
    statement += statement.empty() ? "SET " : ", ";
    statement += fmt::format("@@session.{} = {}", name, value);
  };
  // Character set variables another session left (reported by session
  // tracking after its SET NAMES) go back to DEFAULT first, and the
  // session's SET NAMES then re-establishes its own: DEFAULT after it would
  // leave the server's global charset (utf8mb4) while the proxy reads the
  // session's statements in its own (gbk: found by integration.dialect_diff).
  std::string charset_resets;
  for (const auto& [name, value] : applied.variables) {
    if (isCharsetVariable(name) && !desired.variables.contains(name)) assign(charset_resets, name, "DEFAULT");
  }
  if (!charset_resets.empty()) out.push_back(std::move(charset_resets));
  const bool reset = !out.empty();
  if (!desired.names.empty() && (reset || desired.names != applied.names)) {
    out.push_back("SET NAMES " + desired.names);
  }
  if (desired.character_set != applied.character_set || (reset && !desired.character_set.empty())) {
    // Empty desired means "as SET NAMES left it": re-issue SET NAMES.
    if (desired.character_set.empty()) {
      if (!desired.names.empty() && out.empty()) out.push_back("SET NAMES " + desired.names);
    } else {
      out.push_back("SET CHARACTER SET " + desired.character_set);
    }
  }
  std::string assignments;
  for (const auto& [name, value] : desired.variables) {
    auto it = applied.variables.find(name);
    // After a SET NAMES / SET CHARACTER SET, the session's own charset variables are re-applied.
    const bool overwritten = isCharsetVariable(name) && out.size() > (reset ? 1u : 0u);
    if (it == applied.variables.end() || it->second != value || overwritten) assign(assignments, name, value);
  }
  for (const auto& [name, value] : applied.variables) {
    if (!desired.variables.contains(name) && !isCharsetVariable(name)) assign(assignments, name, "DEFAULT");
  }
  if (!assignments.empty()) out.push_back(std::move(assignments));
  if (desired.isolation != applied.isolation) {
    out.push_back(desired.isolation.empty()
                      ? std::string("SET @@session.tx_isolation = DEFAULT, @@session.tx_read_only = DEFAULT")
                      : "SET SESSION TRANSACTION " + desired.isolation);
  }
  return out;
}

std::string namesForCollation(uint32_t collation_id) {
  for (const auto& c : kCollations) {
    if (c.id == collation_id) return c.names;
  }
  // Any other collation: its character set (MariaDB's whole table), so the
  // client's bytes are read as what they are; the lexer decides separately
  // whether it can read that charset (parser/dialect.hpp).
  auto lookup = parser::charsetByCollationId(collation_id);
  return lookup.name.empty() ? std::string("utf8mb4") : std::string(lookup.name);
}

}  // namespace sp::proxy
