#include "parser/transaction_control.hpp"

#include <string>

#include "parser/classify.hpp"
#include "parser/implicit_commit.hpp"
#include "parser/split.hpp"
#include "parser/text_search.hpp"

namespace sp::parser {

bool isPlainBegin(std::string_view sql) {
  std::string words;
  for (char c : sql) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (!words.empty() && words.back() != ' ') words.push_back(' ');
    } else if (c != ';') {
      words.push_back(lowerAscii(c));
    }
  }
  while (!words.empty() && words.back() == ' ') words.pop_back();
  return words == "begin" || words == "begin work" || words == "start transaction" ||
         words == "start transaction read write";
}

bool chainsOrReleases(std::string_view sql) {
  return containsIgnoringAsciiCase(sql, "chain") || containsIgnoringAsciiCase(sql, "release");
}

std::optional<std::string_view> firstTransactionControl(std::string_view sql, const Dialect& dialect) {
  using K = StatementKind;
  for (const auto& span : splitStatements(sql, dialect)) {
    const std::string_view text = span.text(sql);
    const StatementInfo info = classify(text, dialect);
    const K kind = info.kind;
    // SET autocommit too: turned on, it commits (session_xa.cpp does that
    // for a statement on its own, where it knows the value).
    if (kind == K::kBegin || kind == K::kCommit || kind == K::kRollback || kind == K::kSavepoint || kind == K::kXa ||
        kind == K::kLockTables || kind == K::kUnlockTables || causesImplicitCommit(text, kind, dialect) ||
        autocommitChange(info) != AutocommitChange::kNone) {
      return text;
    }
  }
  return std::nullopt;
}

}  // namespace sp::parser
