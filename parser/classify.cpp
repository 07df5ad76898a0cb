// Statement classification on top of the lexer (see classify.hpp). Each
// statement is a span of significant tokens; the first keyword picks the
// kind and SET statements are parsed into SessionSetting items.
#include "parser/classify.hpp"

#include <charconv>
#include <span>

#include "parser/lexer.hpp"
#include "parser/split.hpp"

namespace sp::parser {
namespace {

using Tokens = std::span<const Token>;

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

std::string toLower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

bool isNameToken(const Token& t) {
  return t.kind == TokenKind::kIdentifier || t.kind == TokenKind::kQuotedIdentifier;
}

// Source text of tokens [first, last] inclusive.
std::string sourceText(std::string_view sql, const Token& first, const Token& last) {
  return std::string(sql.substr(first.begin, last.end - first.begin));
}

class SetParser {
 public:
  SetParser(std::string_view sql, Tokens tokens) : sql_(sql), tokens_(tokens) {}

  // Parses the tokens after SET; false when the statement is not a session
  // assignment list we understand (SET PASSWORD, SET ROLE, malformed input).
  bool parse(std::vector<SessionSetting>& out) {
    if (parseTransaction(out)) return true;
    for (;;) {
      SessionSetting setting;
      if (!parseItem(setting)) return false;
      out.push_back(std::move(setting));
      if (pos_ == tokens_.size()) return true;
      if (!tokens_[pos_].is(TokenKind::kComma)) return false;
      ++pos_;
    }
  }

 private:
  const Token* peek(size_t ahead = 0) const {
    return pos_ + ahead < tokens_.size() ? &tokens_[pos_ + ahead] : nullptr;
  }
  bool peekKeyword(Keyword k, size_t ahead = 0) const {
    const Token* t = peek(ahead);
    return t != nullptr && t->isKeyword(k);
  }
  static bool isScopeKeyword(Keyword k) {
    return k == Keyword::kSESSION || k == Keyword::kLOCAL || k == Keyword::kGLOBAL ||
           k == Keyword::kPERSIST || k == Keyword::kPERSIST_ONLY;
  }

  bool parseTransaction(std::vector<SessionSetting>& out) {
    Keyword scope = Keyword::kNone;
    size_t at = 0;
    if (peek() != nullptr && isScopeKeyword(peek()->keyword) && peekKeyword(Keyword::kTRANSACTION, 1)) {
      scope = peek()->keyword;
      at = 1;
    } else if (!peekKeyword(Keyword::kTRANSACTION)) {
      return false;
    }
    const size_t tail = at + 1;
    if (tail >= tokens_.size()) return false;
    SessionSetting setting;
    setting.kind = scope == Keyword::kNone ? SessionSetting::Kind::kNextTransaction
                   : (scope == Keyword::kSESSION || scope == Keyword::kLOCAL)
                       ? SessionSetting::Kind::kSessionIsolation
                       : SessionSetting::Kind::kGlobalVariable;
    setting.name = "transaction";
    setting.value = sourceText(sql_, tokens_[tail], tokens_.back());
    out.push_back(std::move(setting));
    pos_ = tokens_.size();
    return true;
  }

  bool parseItem(SessionSetting& setting) {
    Keyword scope = Keyword::kNone;
    const Token* first = peek();
    if (first == nullptr) return false;
    if (isScopeKeyword(first->keyword) && peek(1) != nullptr && isNameToken(*peek(1))) {
      scope = first->keyword;
      ++pos_;
    }
    if (scope == Keyword::kNone && peekKeyword(Keyword::kNAMES)) return parseNames(setting);
    if (scope == Keyword::kNone && (peekKeyword(Keyword::kCHARSET) ||
                                    (peekKeyword(Keyword::kCHARACTER) && peekKeyword(Keyword::kSET, 1)))) {
      return parseCharset(setting);
    }
    if (!parseTarget(scope, setting)) return false;
    const Token* op = peek();
    if (op == nullptr || !(op->is(TokenKind::kEquals) || op->is(TokenKind::kAssign))) return false;
    ++pos_;
    return parseValue(setting.value);
  }

  bool parseTarget(Keyword scope, SessionSetting& setting) {
    const Token& t = tokens_[pos_];
    const std::string_view text = t.text(sql_);
    if (t.is(TokenKind::kUserVariable)) {
      if (scope != Keyword::kNone) return false;
      setting.kind = SessionSetting::Kind::kUserVariable;
      setting.name = toLower(text[1] == '`' ? unquoteIdentifier(text.substr(1))
                             : (text[1] == '\'' || text[1] == '"') ? unquoteString(text.substr(1))
                                                                   : std::string(text.substr(1)));
      ++pos_;
      return true;
    }
    bool global = scope == Keyword::kGLOBAL || scope == Keyword::kPERSIST ||
                  scope == Keyword::kPERSIST_ONLY;
    if (t.is(TokenKind::kSystemVariable)) {
      if (scope != Keyword::kNone) return false;
      std::string name = toLower(std::string(text.substr(2)));
      const size_t dot = name.find('.');
      if (dot != std::string::npos) {
        global = name.compare(0, dot, "global") == 0;
        name.erase(0, dot + 1);
      }
      setting.name = std::move(name);
      ++pos_;
    } else if (isNameToken(t)) {
      // Structured names (default.key_buffer_size) keep their dots.
      std::string name = unquoteIdentifier(text);
      ++pos_;
      while (peek() != nullptr && peek()->is(TokenKind::kDot) && peek(1) != nullptr &&
             isNameToken(*peek(1))) {
        name += '.';
        name += unquoteIdentifier(peek(1)->text(sql_));
        pos_ += 2;
      }
      setting.name = toLower(std::move(name));
      // SET PASSWORD = '...' changes an account, not a session variable.
      if (scope == Keyword::kNone && setting.name == "password") return false;
    } else {
      return false;
    }
    setting.kind = global ? SessionSetting::Kind::kGlobalVariable
                          : SessionSetting::Kind::kSystemVariable;
    return true;
  }

  // Expression text up to the next top-level comma (or the end).
  bool parseValue(std::string& value) {
    const size_t first = pos_;
    int depth = 0;
    while (pos_ < tokens_.size()) {
      const Token& t = tokens_[pos_];
      if (t.is(TokenKind::kLeftParen)) ++depth;
      if (t.is(TokenKind::kRightParen) && --depth < 0) return false;
      if (t.is(TokenKind::kComma) && depth == 0) break;
      ++pos_;
    }
    if (pos_ == first || depth != 0) return false;
    value = sourceText(sql_, tokens_[first], tokens_[pos_ - 1]);
    return true;
  }

  // A charset or collation name: bare word, `quoted`, 'string' or DEFAULT.
  bool parseCharsetName(std::string& out) {
    const Token* t = peek();
    if (t == nullptr) return false;
    if (isNameToken(*t)) {
      out += unquoteIdentifier(t->text(sql_));
    } else if (t->is(TokenKind::kString)) {
      out += unquoteString(t->text(sql_));
    } else {
      return false;
    }
    ++pos_;
    return true;
  }

  bool parseNames(SessionSetting& setting) {
    ++pos_;  // NAMES
    setting.kind = SessionSetting::Kind::kNames;
    setting.name = "names";
    if (!parseCharsetName(setting.value)) return false;
    if (peekKeyword(Keyword::kCOLLATE)) {
      ++pos_;
      setting.value += " COLLATE ";
      if (!parseCharsetName(setting.value)) return false;
    }
    return true;
  }

  bool parseCharset(SessionSetting& setting) {
    pos_ += peekKeyword(Keyword::kCHARSET) ? 1 : 2;
    setting.kind = SessionSetting::Kind::kCharacterSet;
    setting.name = "character_set";
    return parseCharsetName(setting.value);
  }

  std::string_view sql_;
  Tokens tokens_;
  size_t pos_ = 0;
};

bool containsKeyword(Tokens tokens, Keyword k) {
  for (const Token& t : tokens) {
    if (t.isKeyword(k)) return true;
  }
  return false;
}

bool containsSequence(Tokens tokens, std::initializer_list<Keyword> sequence) {
  for (size_t i = 0; i + sequence.size() <= tokens.size(); ++i) {
    size_t j = 0;
    for (Keyword k : sequence) {
      if (!tokens[i + j].isKeyword(k)) break;
      ++j;
    }
    if (j == sequence.size()) return true;
  }
  return false;
}

// WITH cte AS (...) <verb>: the verb is the first top-level DML keyword.
StatementKind classifyWith(Tokens tokens) {
  int depth = 0;
  for (const Token& t : tokens) {
    if (t.is(TokenKind::kLeftParen)) ++depth;
    if (t.is(TokenKind::kRightParen)) --depth;
    if (depth != 0) continue;
    switch (t.keyword) {
      case Keyword::kSELECT: return StatementKind::kSelect;
      case Keyword::kUPDATE: return StatementKind::kUpdate;
      case Keyword::kDELETE: return StatementKind::kDelete;
      case Keyword::kINSERT: return StatementKind::kInsert;
      case Keyword::kREPLACE: return StatementKind::kReplace;
      default: break;
    }
  }
  return StatementKind::kOther;
}

void classifyCreate(Tokens tokens, StatementInfo& info) {
  info.kind = StatementKind::kDdl;
  size_t i = 1;
  if (i + 1 < tokens.size() && tokens[i].isKeyword(Keyword::kOR) &&
      tokens[i + 1].isKeyword(Keyword::kREPLACE)) {
    i += 2;  // MariaDB CREATE OR REPLACE TEMPORARY TABLE
  }
  info.creates_temporary_table = i + 1 < tokens.size() && tokens[i].isKeyword(Keyword::kTEMPORARY) &&
                                 tokens[i + 1].isKeyword(Keyword::kTABLE);
}

void classifyUse(std::string_view sql, Tokens tokens, StatementInfo& info) {
  if (tokens.size() != 2 || !isNameToken(tokens[1])) {
    info.kind = StatementKind::kOther;  // malformed: let the server reject it
    return;
  }
  info.kind = StatementKind::kUse;
  info.database = unquoteIdentifier(tokens[1].text(sql));
}

void classifySet(std::string_view sql, Tokens tokens, StatementInfo& info) {
  SetParser parser(sql, tokens.subspan(1));
  std::vector<SessionSetting> settings;
  if (parser.parse(settings)) {
    info.kind = StatementKind::kSet;
    info.settings = std::move(settings);
  } else {
    // SET PASSWORD / ROLE / STATEMENT ... FOR / unparseable: not session
    // variable state we can track; the server decides.
    info.kind = StatementKind::kOther;
  }
}

StatementKind kindAfterKeyword(Tokens tokens) {
  const Token* second = tokens.size() > 1 ? &tokens[1] : nullptr;
  auto secondIs = [&](Keyword k) { return second != nullptr && second->isKeyword(k); };
  switch (tokens[0].keyword) {
    case Keyword::kSELECT: case Keyword::kTABLE: case Keyword::kVALUES:
      return StatementKind::kSelect;
    case Keyword::kINSERT: return StatementKind::kInsert;
    case Keyword::kREPLACE: return StatementKind::kReplace;
    case Keyword::kUPDATE: return StatementKind::kUpdate;
    case Keyword::kDELETE: return StatementKind::kDelete;
    case Keyword::kWITH: return classifyWith(tokens);
    case Keyword::kBEGIN:
      // BEGIN NOT ATOMIC starts a MariaDB compound statement, not a transaction.
      return second == nullptr || secondIs(Keyword::kWORK) ? StatementKind::kBegin
                                                           : StatementKind::kOther;
    case Keyword::kSTART:
      return secondIs(Keyword::kTRANSACTION) ? StatementKind::kBegin : StatementKind::kOther;
    case Keyword::kXA:
      // An XA transaction starts like any other (the proxy defers it to the
      // backend of its first statement); its other verbs stay on that backend.
      return secondIs(Keyword::kSTART) || secondIs(Keyword::kBEGIN) ? StatementKind::kBegin : StatementKind::kXa;
    case Keyword::kCOMMIT: return StatementKind::kCommit;
    case Keyword::kROLLBACK:
      return containsKeyword(tokens, Keyword::kTO) ? StatementKind::kSavepoint
                                                   : StatementKind::kRollback;
    case Keyword::kSAVEPOINT: return StatementKind::kSavepoint;
    case Keyword::kRELEASE:
      return secondIs(Keyword::kSAVEPOINT) ? StatementKind::kSavepoint : StatementKind::kOther;
    case Keyword::kLOCK:
      return secondIs(Keyword::kTABLE) || secondIs(Keyword::kTABLES) ? StatementKind::kLockTables
                                                                    : StatementKind::kOther;
    case Keyword::kUNLOCK:
      return secondIs(Keyword::kTABLE) || secondIs(Keyword::kTABLES) ? StatementKind::kUnlockTables
                                                                    : StatementKind::kOther;
    case Keyword::kFLUSH:
      return containsSequence(tokens, {Keyword::kWITH, Keyword::kREAD, Keyword::kLOCK})
                 ? StatementKind::kLockTables
                 : StatementKind::kOther;
    case Keyword::kSHOW: return StatementKind::kShow;
    case Keyword::kEXPLAIN: case Keyword::kDESCRIBE: case Keyword::kDESC:
      return StatementKind::kExplain;
    case Keyword::kALTER: case Keyword::kTRUNCATE: case Keyword::kRENAME:
      return StatementKind::kDdl;
    case Keyword::kDROP:
      return secondIs(Keyword::kPREPARE) ? StatementKind::kDeallocateSql : StatementKind::kDdl;
    case Keyword::kPREPARE: return StatementKind::kPrepareSql;
    case Keyword::kEXECUTE: return StatementKind::kExecuteSql;
    case Keyword::kDEALLOCATE: return StatementKind::kDeallocateSql;
    case Keyword::kCALL: return StatementKind::kCall;
    case Keyword::kDO: return StatementKind::kDo;
    default: return StatementKind::kOther;
  }
}

bool wordIs(const Token& t, std::string_view sql, std::string_view word) {
  return t.is(TokenKind::kIdentifier) && equalsIgnoreCase(t.text(sql), word);
}

// KILL [HARD | SOFT] [CONNECTION | QUERY] <integer>   (MariaDB's grammar; the
// id may be any expression there, but clients send a number).
void classifyKill(std::string_view sql, Tokens tokens, StatementInfo& info) {
  info.kind = StatementKind::kKill;
  size_t i = 1;
  if (i < tokens.size() && (wordIs(tokens[i], sql, "hard") || wordIs(tokens[i], sql, "soft"))) ++i;
  if (i < tokens.size() && wordIs(tokens[i], sql, "connection")) {
    ++i;
  } else if (i < tokens.size() && wordIs(tokens[i], sql, "query")) {
    info.kill.query_only = true;
    ++i;
  }
  if (i < tokens.size() && wordIs(tokens[i], sql, "user")) {
    info.kill.unsupported = "KILL USER";
    return;
  }
  if (info.kill.query_only && i < tokens.size() && wordIs(tokens[i], sql, "id")) {
    info.kill.unsupported = "KILL QUERY ID (a query id)";
    return;
  }
  if (i + 1 == tokens.size() && tokens[i].is(TokenKind::kUserVariable)) {
    info.kill.variable = std::string(tokens[i].text(sql));
    return;
  }
  uint64_t id = 0;
  bool number = i + 1 == tokens.size() && tokens[i].is(TokenKind::kInteger);
  if (number) {
    const std::string_view digits = tokens[i].text(sql);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
    number = ec == std::errc() && end == digits.data() + digits.size();
  }
  if (!number) {
    info.kill.unsupported = "KILL with an id that is not a connection id number";
    return;
  }
  info.kill.id = id;
}

void classifyStatement(std::string_view sql, Tokens tokens, StatementInfo& info) {
  const Token& first = tokens[0];
  if (first.is(TokenKind::kLeftParen)) {
    // (SELECT ...) UNION (SELECT ...)
    size_t i = 0;
    while (i < tokens.size() && tokens[i].is(TokenKind::kLeftParen)) ++i;
    const bool select = i < tokens.size() && (tokens[i].isKeyword(Keyword::kSELECT) ||
                                              tokens[i].isKeyword(Keyword::kWITH));
    info.kind = select ? StatementKind::kSelect : StatementKind::kOther;
    return;
  }
  if (first.isKeyword(Keyword::kSET)) {
    info.set_statement_for = tokens.size() > 1 && wordIs(tokens[1], sql, "statement");
    return classifySet(sql, tokens, info);
  }
  if (first.isKeyword(Keyword::kUSE)) return classifyUse(sql, tokens, info);
  if (first.isKeyword(Keyword::kCREATE)) return classifyCreate(tokens, info);
  if (wordIs(first, sql, "kill")) return classifyKill(sql, tokens, info);
  info.kind = first.is(TokenKind::kIdentifier) ? kindAfterKeyword(tokens) : StatementKind::kOther;
}

void scanPinFlags(std::string_view sql, Tokens tokens, StatementInfo& info) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (t.is(TokenKind::kUserVariable)) info.uses_user_variable = true;
    if (t.isKeyword(Keyword::kSQL_CALC_FOUND_ROWS)) info.uses_found_rows = true;
    if (t.is(TokenKind::kIdentifier) && t.keyword == Keyword::kNone && i + 1 < tokens.size() &&
        tokens[i + 1].is(TokenKind::kLeftParen)) {
      const std::string_view name = t.text(sql);
      if (equalsIgnoreCase(name, "get_lock")) info.uses_named_lock = true;
      if (equalsIgnoreCase(name, "found_rows")) info.uses_found_rows = true;
      if (equalsIgnoreCase(name, "last_insert_id")) info.uses_last_insert_id = true;
      if (equalsIgnoreCase(name, "connection_id")) info.calls_connection_id = true;
    }
    if (t.is(TokenKind::kSystemVariable)) {
      std::string_view name = t.text(sql);
      name = name.substr(name.rfind('.') == std::string_view::npos ? 2 : name.rfind('.') + 1);
      if (equalsIgnoreCase(name, "identity") || equalsIgnoreCase(name, "last_insert_id")) {
        info.uses_last_insert_id = true;
      }
      if (equalsIgnoreCase(name, "warning_count") || equalsIgnoreCase(name, "error_count")) {
        info.reads_diagnostics = true;
      }
    }
    if ((t.isKeyword(Keyword::kFROM) || t.isKeyword(Keyword::kJOIN) || t.isKeyword(Keyword::kINTO)) &&
        i + 1 < tokens.size()) {
      const Token& next = tokens[i + 1];
      const bool name = (next.is(TokenKind::kIdentifier) && next.keyword == Keyword::kNone) ||
                        next.is(TokenKind::kQuotedIdentifier);
      if (name && !equalsIgnoreCase(next.text(sql), "dual")) info.names_table = true;
    }
    if (t.isKeyword(Keyword::kCONSISTENT) && i + 1 < tokens.size() && tokens[i + 1].isKeyword(Keyword::kSNAPSHOT)) {
      info.consistent_snapshot = true;
    }
  }
}

// LOAD DATA | XML [LOW_PRIORITY | CONCURRENT] LOCAL INFILE ...
bool loadsLocalFile(std::string_view sql, Tokens tokens) {
  auto word = [&](size_t i, std::string_view w) { return i < tokens.size() && wordIs(tokens[i], sql, w); };
  if (!word(0, "load") || !(word(1, "data") || word(1, "xml"))) return false;
  size_t i = 2;
  if (word(i, "low_priority") || word(i, "concurrent")) ++i;
  return word(i, "local");
}

// SHOW [COUNT(*)] WARNINGS|ERRORS [LIMIT ...], GET [CURRENT|STACKED] DIAGNOSTICS.
bool readsDiagnostics(std::string_view sql, Tokens tokens) {
  if (tokens.size() < 2) return false;
  auto word = [&](size_t i, std::string_view w) { return i < tokens.size() && wordIs(tokens[i], sql, w); };
  if (tokens[0].isKeyword(Keyword::kSHOW)) {
    const size_t i = word(1, "count") ? 5 : 1;  // SHOW COUNT ( * ) WARNINGS
    return word(i, "warnings") || word(i, "errors");
  }
  return word(0, "get") && (word(1, "diagnostics") || word(2, "diagnostics"));
}

}  // namespace

StatementInfo classify(std::string_view sql, const Dialect& dialect) {
  const std::vector<Token> all = tokenize(sql, dialect);
  return classify(sql, all, dialect);
}

StatementInfo classify(std::string_view sql, std::span<const Token> all, const Dialect& dialect) {
  StatementInfo info;
  const Tokens tokens = all.first(all.size() - 1);  // drop kEnd
  scanPinFlags(sql, tokens, info);

  Tokens first_statement;
  size_t statements = 0;
  size_t start = 0;
  for (size_t i = 0; i <= tokens.size(); ++i) {
    if (i < tokens.size() && !tokens[i].is(TokenKind::kSemicolon)) continue;
    if (i > start) {
      if (statements == 0) first_statement = tokens.subspan(start, i - start);
      ++statements;
    }
    start = i + 1;
  }
  if (statements == 0) {
    info.kind = StatementKind::kEmpty;
    return info;
  }
  classifyStatement(sql, first_statement, info);
  if (readsDiagnostics(sql, first_statement)) info.reads_diagnostics = true;
  info.load_data_local = loadsLocalFile(sql, first_statement);
  // A ';' inside a compound statement (CREATE PROCEDURE ... BEGIN ... END,
  // BEGIN NOT ATOMIC, IF ... END IF) does not split it: count statements as
  // the server does, only when there is a ';' between tokens at all.
  info.multiple_statements = statements > 1 && splitStatements(sql, dialect).size() > 1;
  return info;
}

}  // namespace sp::parser
