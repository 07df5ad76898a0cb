// Keyword identification. The lexer never produces a separate "keyword"
// token kind: a word is always an identifier-like token, and carries the
// keyword id it matched (case-insensitively) so the parser can decide per
// context whether it is a keyword or a name (MySQL lets most keywords be
// column names, e.g. `status`, `value`, `level`).
#pragma once
#include <cstdint>
#include <string_view>

namespace sp::parser {

// X(NAME, reserved): "reserved" words cannot be used as bare aliases or
// names by the parser (they would make `SELECT a FROM` ambiguous).
#define SP_PARSER_KEYWORDS(X)                                                              \
  X(ALL, true) X(ALTER, true) X(AND, true) X(ANY, false) X(AS, true) X(ASC, true)          \
  X(BEGIN, false) X(BETWEEN, true) X(BINARY, true) X(BY, true) X(CALL, true)               \
  X(CASE, true) X(CAST, false) X(CHAIN, false) X(CHARACTER, true) X(CHARSET, false)        \
  X(COLLATE, true) X(COMMIT, false) X(COMMITTED, false) X(CONSISTENT, false)               \
  X(CONVERT, true) X(CREATE, true) X(CROSS, true) X(DEALLOCATE, false) X(DEFAULT, true)    \
  X(DELAYED, true) X(DELETE, true) X(DESC, true) X(DESCRIBE, true) X(DISTINCT, true)       \
  X(DISTINCTROW, true) X(DIV, true) X(DO, false) X(DROP, true) X(DUPLICATE, false)         \
  X(ELSE, true) X(END, false) X(ESCAPE, false) X(EXECUTE, false) X(EXISTS, true)           \
  X(EXPLAIN, true) X(FALSE, true) X(FLUSH, false) X(FOR, true) X(FORCE, true)              \
  X(FROM, true) X(FULL, false) X(GLOBAL, false) X(GROUP, true) X(HAVING, true)             \
  X(HIGH_PRIORITY, true) X(IGNORE, true) X(IN, true) X(INDEX, true) X(INNER, true)         \
  X(INSERT, true) X(INTERVAL, true) X(INTO, true) X(IS, true) X(ISOLATION, false)          \
  X(JOIN, true) X(KEY, true) X(LEFT, true) X(LEVEL, false) X(LIKE, true) X(LIMIT, true)    \
  X(LOCAL, false) X(LOCK, true) X(LOCKED, false) X(LOW_PRIORITY, true) X(MOD, true)        \
  X(MODE, false) X(NAMES, false) X(NATURAL, true) X(NO, false) X(NOT, true)                \
  X(NOWAIT, false) X(NULL, true) X(OF, true) X(OFFSET, false) X(ON, true) X(ONLY, false)   \
  X(OR, true) X(ORDER, true) X(OUTER, true) X(PERSIST, false) X(PERSIST_ONLY, false)       \
  X(PREPARE, false) X(QUICK, false) X(READ, true) X(REGEXP, true) X(RELEASE, true)         \
  X(RENAME, true) X(REPEATABLE, false) X(REPLACE, true) X(RIGHT, true) X(RLIKE, true)      \
  X(ROLLBACK, false) X(ROLLUP, false) X(ROW, false) X(SAVEPOINT, false) X(SELECT, true)    \
  X(SERIALIZABLE, false) X(SESSION, false) X(SET, true) X(SHARE, false) X(SHOW, true)      \
  X(SKIP, false) X(SNAPSHOT, false) X(SOME, false) X(SQL_BIG_RESULT, true)                 \
  X(SQL_BUFFER_RESULT, false) X(SQL_CACHE, false) X(SQL_CALC_FOUND_ROWS, true)             \
  X(SQL_NO_CACHE, false) X(SQL_SMALL_RESULT, true) X(START, false) X(STRAIGHT_JOIN, true)  \
  X(TABLE, true) X(TABLES, false) X(TEMPORARY, false) X(THEN, true) X(TO, true)            \
  X(TRANSACTION, false) X(TRUE, true) X(TRUNCATE, false) X(UNCOMMITTED, false)             \
  X(UNION, true) X(UNKNOWN, false) X(UNLOCK, true) X(UPDATE, true) X(USE, true)            \
  X(USING, true) X(VALUE, false) X(VALUES, true) X(WHEN, true) X(WHERE, true)              \
  X(WITH, true) X(WORK, false) X(WRITE, true) X(XA, false) X(XOR, true)

enum class Keyword : uint16_t {
  kNone = 0,
#define SP_PARSER_KEYWORD_ENUM(name, reserved) k##name,
  SP_PARSER_KEYWORDS(SP_PARSER_KEYWORD_ENUM)
#undef SP_PARSER_KEYWORD_ENUM
};

// Case-insensitive lookup of a bare word; kNone when it is not a keyword.
Keyword lookupKeyword(std::string_view word);

// Upper-case spelling ("SELECT"); "" for kNone.
std::string_view keywordName(Keyword keyword);

// True when the word cannot be a bare alias/name (see SP_PARSER_KEYWORDS).
bool isReservedKeyword(Keyword keyword);

}  // namespace sp::parser
