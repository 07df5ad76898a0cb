// Statement policy analysis (statement_policy.hpp). Each statement of the
// text is looked at from its first significant token, the way the server's
// grammar starts; stored program bodies are scanned for statements that may
// start anywhere inside them.
#include "parser/statement_policy.hpp"

#include <span>

#include "parser/classify.hpp"
#include "parser/lexer.hpp"

namespace sp::parser {
namespace {

using Tokens = std::span<const Token>;

// `PREPARE .. FROM 'PREPARE .. FROM ''...'''` nests; past this depth the
// text is treated as unchecked.
constexpr int kMaxDynamicDepth = 4;

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool sameWord(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool isName(const Token& t) { return t.is(TokenKind::kIdentifier) || t.is(TokenKind::kQuotedIdentifier); }

class Analyzer {
 public:
  Analyzer(std::string_view sql, int depth, std::vector<PrivilegeNeed>& out) : sql_(sql), depth_(depth), out_(out) {}

  void run() {
    const std::vector<Token> all = tokenize(sql_);
    run(all);
  }
  // `all`: tokenize(sql_), kEnd last.
  void run(std::span<const Token> all) {
    const Tokens tokens = all.first(all.size() - 1);  // drop kEnd
    bool in_body = false;
    size_t start = 0;
    for (size_t i = 0; i <= tokens.size(); ++i) {
      if (i < tokens.size() && !tokens[i].is(TokenKind::kSemicolon)) continue;
      if (i > start) {
        Tokens piece = tokens.subspan(start, i - start);
        // Stored programs and compound statements hold ';' inside
        // BEGIN .. END: every piece from the first such statement on may be
        // part of a body, where statements also start after THEN, DO, ...
        // A piece after the opening of a body may be a statement of it:
        // `BEGIN SELECT 1; KILL 5; END` puts KILL first in its piece.
        in_program_ = in_body;
        in_body = statement(piece) || in_body;
        in_program_ = false;
        if (in_body) scanBody(piece);
        scanFunctions(piece);
      }
      start = i + 1;
    }
  }

 private:
  bool word(size_t i, Tokens t, std::string_view w) const {
    return i < t.size() && t[i].is(TokenKind::kIdentifier) && sameWord(t[i].text(sql_), w);
  }

  void global(std::string privilege, std::string statement) {
    out_.push_back({Need::kGlobalPrivilege, std::move(privilege), {}, {}, {}, false, std::move(statement)});
  }

  // One statement from its first token; true when it opens a stored program
  // or compound statement body.
  bool statement(Tokens t) {
    if (t.empty()) return false;
    const auto w = [&](size_t i, std::string_view text) { return word(i, t, text); };
    if (w(0, "kill") && (depth_ > 0 || in_program_)) {
      return global("CONNECTION ADMIN", std::string(kNestedKillStatement)), false;
    }
    if (w(0, "set")) return setStatement(t), false;
    if (w(0, "create") || w(0, "alter") || w(0, "drop")) return ddl(t);
    if (w(0, "rename")) {
      if (w(1, "user")) return global("CREATE USER", "RENAME USER"), false;
      size_t i = w(1, "table") || w(1, "tables") ? 2 : 1;
      return ddlNeed("DROP, ALTER", t, i, false, "RENAME TABLE"), false;
    }
    if (w(0, "truncate")) return ddlNeed("DROP", t, w(1, "table") ? 2 : 1, false, "TRUNCATE"), false;
    if (w(0, "grant") || w(0, "revoke")) {
      return global("GRANT OPTION", w(0, "grant") ? "GRANT" : "REVOKE"), false;
    }
    if (w(0, "shutdown") || w(0, "restart")) return global("SHUTDOWN", "SHUTDOWN"), false;
    if (w(0, "install") || w(0, "uninstall")) {
      const bool install = w(0, "install");
      out_.push_back({Need::kSystemTable, {}, install ? "INSERT" : "DELETE", "mysql", "plugin", false,
                      install ? "INSTALL PLUGIN" : "UNINSTALL PLUGIN"});
      return false;
    }
    if (w(0, "flush")) return global("RELOAD", "FLUSH"), false;
    if (w(0, "reset")) return global("RELOAD", "RESET"), false;
    if (w(0, "purge")) return global("SUPER, BINLOG ADMIN", "PURGE BINARY LOGS"), false;
    if (w(0, "binlog")) return global("SUPER, BINLOG REPLAY", "BINLOG"), false;
    if (w(0, "change") && (w(1, "master") || w(1, "replication"))) {
      return global("SUPER, REPLICATION SLAVE ADMIN", "CHANGE MASTER"), false;
    }
    if ((w(0, "start") || w(0, "stop")) && (w(1, "slave") || w(1, "replica") || w(1, "all"))) {
      return global("SUPER, REPLICATION SLAVE ADMIN", w(0, "start") ? "START SLAVE" : "STOP SLAVE"), false;
    }
    if (w(0, "load") && (w(1, "data") || w(1, "xml"))) return loadData(t), false;
    if (w(0, "prepare")) {
      for (size_t i = 1; i < t.size(); ++i) {
        if (w(i, "from")) return dynamicSql(t.subspan(i + 1), "PREPARE"), false;
      }
      return false;
    }
    if (w(0, "execute") && w(1, "immediate")) return dynamicSql(t.subspan(2), "EXECUTE IMMEDIATE"), false;
    // Compound statements outside stored programs (MariaDB): BEGIN NOT
    // ATOMIC, IF, loops, CASE, and any of them behind a label.
    if (w(0, "begin") && w(1, "not")) return true;
    for (std::string_view k : {"if", "while", "loop", "repeat", "case", "for"}) {
      if (w(0, k)) return true;
    }
    return t.size() > 1 && isName(t[0]) && t[1].is(TokenKind::kErrorBadCharacter) && t[1].text(sql_) == ":";
  }

  void setStatement(Tokens t) {
    const std::string_view text = sql_.substr(t.front().begin, t.back().end - t.front().begin);
    StatementInfo info = classify(text);
    if (info.kind == StatementKind::kSet) {
      for (const auto& s : info.settings) {
        if (s.kind == SessionSetting::Kind::kGlobalVariable) return global("SUPER", "SET GLOBAL");
      }
      return;
    }
    const auto w = [&](size_t i, std::string_view k) { return word(i, t, k); };
    if (w(1, "default") && w(2, "role")) return global("CREATE USER", "SET DEFAULT ROLE");
    if (w(1, "statement")) {
      // SET STATEMENT var = value [, ...] FOR <statement>
      int depth = 0;
      for (size_t i = 2; i < t.size(); ++i) {
        if (t[i].is(TokenKind::kLeftParen)) ++depth;
        if (t[i].is(TokenKind::kRightParen)) --depth;
        if (depth == 0 && w(i, "for")) {
          statement(t.subspan(i + 1));
          return;
        }
      }
      return;
    }
    // Not a list of session assignments the classifier reads: look at the
    // start of every item (SET PASSWORD, a GLOBAL scope anywhere).
    int depth = 0;
    for (size_t i = 1; i < t.size(); ++i) {
      if (t[i].is(TokenKind::kLeftParen)) ++depth;
      if (t[i].is(TokenKind::kRightParen)) --depth;
      const bool item_start = depth == 0 && (i == 1 || t[i - 1].is(TokenKind::kComma));
      if (!item_start) continue;
      if (w(i, "password")) {
        out_.push_back({Need::kDatabase, {}, {}, {}, "mysql", false, "SET PASSWORD"});
        return;
      }
      const std::string_view text_i = t[i].text(sql_);
      const bool global_variable = t[i].is(TokenKind::kSystemVariable) && text_i.size() > 9 &&
                                   sameWord(text_i.substr(0, 9), "@@global.");
      if (w(i, "global") || w(i, "persist") || w(i, "persist_only") || global_variable) {
        return global("SUPER", "SET GLOBAL");
      }
    }
  }

  // Skips `DEFINER = user`: 'a'@'h', a@h (the @host lexes as a user
  // variable), CURRENT_USER [()] or CURRENT_ROLE.
  size_t skipDefiner(Tokens t, size_t i) const {
    if (i < t.size() && t[i].is(TokenKind::kEquals)) ++i;
    if (i >= t.size()) return i;
    ++i;  // the user name (or CURRENT_USER)
    if (i < t.size() && t[i].is(TokenKind::kUserVariable)) ++i;
    if (i + 1 < t.size() && t[i].is(TokenKind::kLeftParen) && t[i + 1].is(TokenKind::kRightParen)) i += 2;
    return i;
  }

  // CREATE / ALTER / DROP: skips the modifiers to the object type.
  bool ddl(Tokens t) {
    const auto w = [&](size_t i, std::string_view k) { return word(i, t, k); };
    const std::string verb = w(0, "create") ? "CREATE" : w(0, "alter") ? "ALTER" : "DROP";
    bool temporary = false;
    size_t i = 1;
    for (;;) {
      if (w(i, "or") && w(i + 1, "replace")) {
        i += 2;
      } else if (w(i, "temporary")) {
        temporary = true;
        ++i;
      } else if (w(i, "definer")) {
        i = skipDefiner(t, i + 1);
      } else if (w(i, "algorithm") && i + 2 < t.size() && t[i + 1].is(TokenKind::kEquals)) {
        i += 3;
      } else if (w(i, "sql") && w(i + 1, "security")) {
        i += 3;
      } else if (w(i, "online") || w(i, "offline") || w(i, "ignore") || w(i, "unique") || w(i, "fulltext") ||
                 w(i, "spatial") || w(i, "aggregate") || w(i, "nonblocking")) {
        ++i;
      } else {
        break;
      }
    }
    if (w(i, "user") || w(i, "role")) {
      global("CREATE USER", verb + (w(i, "user") ? " USER" : " ROLE"));
      return false;
    }
    if (w(i, "database") || w(i, "schema")) {
      PrivilegeNeed need{Need::kDatabase, {}, {}, {}, {}, false, verb + " DATABASE"};
      size_t n = skipIfExists(t, i + 1);
      if (n < t.size() && isName(t[n])) need.object = unquoteIdentifier(t[n].text(sql_));
      out_.push_back(std::move(need));
      return false;
    }
    if (w(i, "server")) {
      global("SUPER, FEDERATED ADMIN", verb + " SERVER");
      return false;
    }
    if (w(i, "tablespace") || w(i, "logfile")) {
      global("CREATE TABLESPACE", verb + " TABLESPACE");
      return false;
    }
    if (w(i, "prepare")) return false;  // DROP PREPARE: deallocates a prepared statement
    if (w(i, "table") || w(i, "sequence")) {
      if (!temporary) ddlNeed(verb, t, i + 1, false, verb + (w(i, "table") ? " TABLE" : " SEQUENCE"));
      return false;
    }
    if (w(i, "index")) {
      // [CREATE | DROP] INDEX name ON table: MariaDB names the table.
      for (size_t n = i + 1; n < t.size(); ++n) {
        if (w(n, "on")) return ddlNeed("INDEX", t, n + 1, false, verb + " INDEX"), false;
      }
      ddlNeed("INDEX", t, t.size(), false, verb + " INDEX");
      return false;
    }
    if (w(i, "view")) {
      ddlNeed(verb == "DROP" ? "DROP" : "CREATE VIEW", t, i + 1, false, verb + " VIEW");
      return false;
    }
    if (w(i, "trigger")) {
      if (verb == "DROP") return ddlNeed("TRIGGER", t, i + 1, false, "DROP TRIGGER"), false;
      int depth = 0;
      for (size_t n = i + 1; n < t.size(); ++n) {
        if (t[n].is(TokenKind::kLeftParen)) ++depth;
        if (t[n].is(TokenKind::kRightParen)) --depth;
        if (depth == 0 && w(n, "on")) return ddlNeed("TRIGGER", t, n + 1, false, verb + " TRIGGER"), true;
      }
      ddlNeed("TRIGGER", t, t.size(), false, verb + " TRIGGER");
      return true;
    }
    for (std::string_view routine : {"procedure", "function", "event", "package"}) {
      if (!w(i, routine)) continue;
      std::string kind(routine);
      for (char& c : kind) c = static_cast<char>(c - 'a' + 'A');
      size_t n = w(i + 1, "body") ? i + 2 : i + 1;
      ddlNeed(verb, t, n, true, verb + " " + kind);
      return verb != "DROP";
    }
    ddlNeed(verb, t, t.size(), false, verb);  // an object type not listed: DDL all the same
    return false;
  }

  size_t skipIfExists(Tokens t, size_t i) const {
    if (word(i, t, "if") && word(i + 1, t, "not") && word(i + 2, t, "exists")) return i + 3;
    if (word(i, t, "if") && word(i + 1, t, "exists")) return i + 2;
    return i;
  }

  // DDL `command` on the [db.]name at t[i] (after IF [NOT] EXISTS).
  void ddlNeed(std::string command, Tokens t, size_t i, bool routine, std::string statement) {
    PrivilegeNeed need{Need::kDdl, {}, std::move(command), {}, {}, routine, std::move(statement)};
    i = skipIfExists(t, i);
    if (i < t.size() && isName(t[i])) {
      need.object = unquoteIdentifier(t[i].text(sql_));
      if (i + 2 < t.size() && t[i + 1].is(TokenKind::kDot) && isName(t[i + 2])) {
        need.database = std::move(need.object);
        need.object = unquoteIdentifier(t[i + 2].text(sql_));
      }
    }
    out_.push_back(std::move(need));
  }

  // LOAD DATA | XML [LOW_PRIORITY | CONCURRENT] [LOCAL] INFILE: without
  // LOCAL the server reads a file of its own host.
  void loadData(Tokens t) {
    for (size_t i = 2; i < t.size() && i < 5; ++i) {
      if (word(i, t, "local")) return;
      if (word(i, t, "infile")) return global("FILE", "LOAD DATA INFILE");
    }
  }

  // The statement text of PREPARE .. FROM / EXECUTE IMMEDIATE: a string
  // literal is analysed like any statement; anything else is unknown.
  void dynamicSql(Tokens rest, std::string_view what) {
    size_t n = 0;
    while (n < rest.size() && rest[n].is(TokenKind::kString)) ++n;
    const bool literal = n > 0 && (n == rest.size() || word(n, rest, "using"));
    if (!literal || depth_ >= kMaxDynamicDepth) {
      out_.push_back({Need::kUncheckedDynamicSql, {}, {}, {}, {}, false, std::string(what)});
      return;
    }
    const std::string inner = unquoteString(sql_.substr(rest[0].begin, rest[n - 1].end - rest[0].begin));
    Analyzer(inner, depth_ + 1, out_).run();
  }

  // Inside a body a statement may start after BEGIN, THEN, DO, a handler
  // declaration, a label...: every word that can only start one of the
  // statements above counts (a column spelled like one is refused with it).
  void scanBody(Tokens t) {
    static constexpr std::string_view kStarts[] = {
        "set", "create", "alter", "drop", "rename", "truncate", "grant", "revoke", "shutdown", "restart",
        "install", "uninstall", "flush", "reset", "purge", "binlog", "change", "start", "stop", "load",
        "prepare", "execute", "kill"};
    for (size_t i = 1; i < t.size(); ++i) {
      if (!t[i].is(TokenKind::kIdentifier) || t[i - 1].is(TokenKind::kDot)) continue;
      if (i + 1 < t.size() && (t[i + 1].is(TokenKind::kLeftParen) || t[i + 1].is(TokenKind::kDot))) continue;
      for (std::string_view start : kStarts) {
        if (!sameWord(t[i].text(sql_), start)) continue;
        in_program_ = true;  // a statement of a body runs when the program does
        statement(t.subspan(i));
        in_program_ = false;
        break;
      }
    }
  }

  // Anywhere in a statement: LOAD_FILE(...) and INTO OUTFILE | DUMPFILE.
  void scanFunctions(Tokens t) {
    for (size_t i = 0; i < t.size(); ++i) {
      if (word(i, t, "load_file") && i + 1 < t.size() && t[i + 1].is(TokenKind::kLeftParen) &&
          (i == 0 || !t[i - 1].is(TokenKind::kDot))) {
        global("FILE", "LOAD_FILE()");
      }
      if (word(i, t, "into") && (word(i + 1, t, "outfile") || word(i + 1, t, "dumpfile"))) {
        global("FILE", word(i + 1, t, "outfile") ? "SELECT INTO OUTFILE" : "SELECT INTO DUMPFILE");
      }
    }
  }

  std::string_view sql_;
  int depth_;
  bool in_program_ = false;  // statement() called for a statement inside a body (scanBody)
  std::vector<PrivilegeNeed>& out_;
};

}  // namespace

std::vector<PrivilegeNeed> privilegesNeeded(std::string_view sql, bool backslash_escapes) {
  return privilegesNeeded(sql, {}, backslash_escapes);
}

std::vector<PrivilegeNeed> privilegesNeeded(std::string_view sql, std::span<const Token> tokens,
                                            bool backslash_escapes) {
  std::vector<PrivilegeNeed> out;
  if (backslash_escapes || sql.find('\\') == std::string_view::npos) {
    if (tokens.empty()) Analyzer(sql, 0, out).run();
    else Analyzer(sql, 0, out).run(tokens);
    return out;
  }
  // NO_BACKSLASH_ESCAPES: a backslash is an ordinary character, so strings
  // end at the first unpaired quote. The lexer always reads escapes; with
  // every backslash made a space it splits the text exactly as the server
  // will (`'\'; SHUTDOWN; -- '` is a string and SHUTDOWN there).
  std::string plain(sql);
  for (char& c : plain) {
    if (c == '\\') c = ' ';
  }
  Analyzer(plain, 0, out).run();
  return out;
}

}  // namespace sp::parser
