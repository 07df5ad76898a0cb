// Dialect: sql_mode flags, charsets, versioned comments, multi-byte lexing,
// statement splitting. dialect_cases.txt holds cases whose expected rows come
// from MariaDB 10.11.19 (tests/integration/dialect_server.py re-checks them).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "parser/dialect.hpp"
#include "parser/lexer.hpp"
#include "parser/parse.hpp"
#include "parser/split.hpp"
#include "tests/unit/parser/dialect_row.hpp"

namespace sp::parser {
namespace {

bool rowMatches(const std::string& lexer, const std::string& server) {
  if (lexer == "ERR" || server == "ERR") return lexer == server;
  std::vector<std::string> a, b;
  for (auto [text, out] : {std::pair{&lexer, &a}, std::pair{&server, &b}}) {
    size_t start = 0;
    for (size_t at; (at = text->find(" ; ", start)) != std::string::npos; start = at + 3) {
      out->push_back(text->substr(start, at - start));
    }
    out->push_back(text->substr(start));
  }
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != "*" && trim(a[i]) != trim(b[i])) return false;
  }
  return true;
}

TEST(DialectCases, LexerReadsEachCaseAsMariaDB) {
  std::ifstream in(SP_PARSER_DIALECT_CASES, std::ios::binary);
  ASSERT_TRUE(in) << SP_PARSER_DIALECT_CASES;
  std::string line;
  int cases = 0;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> parts;
    size_t start = 0;
    for (int i = 0; i < 3; ++i) {
      const size_t bar = line.find('|', start);
      ASSERT_NE(bar, std::string::npos) << "line " << number;
      parts.push_back(trim(std::string_view(line).substr(start, bar - start)));
      start = bar + 1;
    }
    const std::string sql = unescape(trim(std::string_view(line).substr(start)));
    const CharsetLookup charset = charsetByName(parts[0]);
    ASSERT_EQ(charset.status, CharsetStatus::kOk) << parts[0];
    Dialect dialect = fromSqlMode(parts[1]);
    dialect.charset = charset.charset;
    const std::string row = lexerRow(sql, dialect);
    EXPECT_TRUE(rowMatches(row, parts[2])) << "line " << number << ": " << line << "\n  lexer reads: " << row;
    ++cases;
  }
  EXPECT_GE(cases, 70);
}

TEST(Dialect, FromSqlModeExpandsCombinationsAsMariaDB) {
  const Dialect none = fromSqlMode("STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION");
  EXPECT_EQ(none, Dialect{});
  // @@sql_mode after SET sql_mode='ANSI' on MariaDB 10.11.19:
  const Dialect ansi = fromSqlMode("REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ANSI");
  EXPECT_TRUE(ansi.pipes_as_concat && ansi.ansi_quotes && ansi.ignore_space);
  EXPECT_FALSE(ansi.no_backslash_escapes || ansi.high_not_precedence || ansi.mssql_brackets);
  EXPECT_EQ(fromSqlMode("ansi"), ansi);  // unexpanded, any case
  for (const char* m : {"DB2", "POSTGRESQL", "MAXDB"}) EXPECT_EQ(fromSqlMode(m), ansi) << m;
  EXPECT_TRUE(fromSqlMode("MSSQL").mssql_brackets);
  EXPECT_FALSE(fromSqlMode("ORACLE").supported());
  EXPECT_TRUE(fromSqlMode("PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ORACLE,NO_KEY_OPTIONS").oracle);
  EXPECT_TRUE(fromSqlMode("MYSQL40,HIGH_NOT_PRECEDENCE").high_not_precedence);
  EXPECT_TRUE(fromSqlMode("MYSQL323").high_not_precedence);
  EXPECT_TRUE(fromSqlMode(" no_backslash_escapes ").no_backslash_escapes);
  EXPECT_TRUE(fromSqlMode("'ANSI_QUOTES'").ansi_quotes);
  EXPECT_EQ(fromSqlMode(""), Dialect{});
}

TEST(Dialect, CharsetNames) {
  EXPECT_EQ(charsetByName("GBK").charset, Charset::kGbk);
  EXPECT_EQ(charsetByName("utf8").charset, Charset::kUtf8mb3);
  EXPECT_EQ(charsetByName("utf8mb3").charset, Charset::kUtf8mb3);
  EXPECT_EQ(charsetByName("cp932_japanese_ci").charset, Charset::kCp932);
  EXPECT_EQ(charsetByName("utf8mb4_uca1400_ai_ci").charset, Charset::kUtf8mb4);
  EXPECT_EQ(charsetByName("binary").charset, Charset::kBinary);
  for (const char* name : {"ucs2", "utf16", "utf16le", "utf32"}) {
    EXPECT_EQ(charsetByName(name).status, CharsetStatus::kNotClientCharset) << name;
  }
  EXPECT_EQ(charsetByName("gb18030").status, CharsetStatus::kUnsupported);
  EXPECT_EQ(charsetByName("swe7").status, CharsetStatus::kUnsupported);
  EXPECT_EQ(charsetByName("koi8r").status, CharsetStatus::kUnsupported);
  EXPECT_EQ(charsetByName("klingon").status, CharsetStatus::kUnknown);
  EXPECT_EQ(charsetName(Charset::kSjis), "sjis");
}

TEST(Dialect, CollationIdsMatchTheServerTable) {
  std::ifstream in(SP_PARSER_COLLATIONS_TSV);
  ASSERT_TRUE(in);
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    uint32_t id = 0;
    std::string charset, collation;
    fields >> id >> charset >> collation;
    const CharsetLookup byId = charsetByCollationId(id);
    const CharsetLookup byName = charsetByName(charset);
    EXPECT_EQ(byId.status, byName.status) << id;
    EXPECT_EQ(byId.charset, byName.charset) << id;
    EXPECT_EQ(byId.name, byName.name) << id;
    EXPECT_EQ(charsetByName(collation).name, byName.name) << collation;
    ++rows;
  }
  EXPECT_EQ(rows, 1242);
  EXPECT_EQ(charsetByCollationId(28).charset, Charset::kGbk);    // gbk_chinese_ci
  EXPECT_EQ(charsetByCollationId(95).charset, Charset::kCp932);  // cp932_japanese_ci
  EXPECT_EQ(charsetByCollationId(45).charset, Charset::kUtf8mb4);
  EXPECT_EQ(charsetByCollationId(35).status, CharsetStatus::kNotClientCharset);  // ucs2_general_ci
  EXPECT_EQ(charsetByCollationId(17).status, CharsetStatus::kUnknown);  // no such id
  EXPECT_EQ(charsetByCollationId(255).status, CharsetStatus::kUnknown);  // MySQL 8's utf8mb4_0900_ai_ci
}

TEST(Dialect, ServerVersion) {
  EXPECT_EQ(serverVersionFromString("10.11.19-MariaDB-0+deb12u1"), 101119u);
  EXPECT_EQ(serverVersionFromString("5.5.5-10.11.19-MariaDB"), 101119u);
  EXPECT_EQ(serverVersionFromString("11.4.2-MariaDB"), 110402u);
  EXPECT_EQ(serverVersionFromString("8.0.36"), 80036u);
  EXPECT_EQ(serverVersionFromString("garbage"), 0u);
  EXPECT_EQ(serverVersionFromString("10.x"), 0u);
}

TEST(Dialect, VersionCommentsFollowTheServerVersion) {
  Dialect old_server;
  old_server.server_version = 100600;
  EXPECT_EQ(lexerRow("SELECT 1 /*!100600 ,2 */", old_server), "1 ; 2");
  EXPECT_EQ(lexerRow("SELECT 1 /*!100601 ,2 */", old_server), "1");
  EXPECT_EQ(lexerRow("SELECT 1 /*M!100700 ,2 */", old_server), "1");
  // The example: MariaDB never executes /*!80000 ... */.
  auto where = parse("SELECT COUNT(*) FROM msg WHERE conv_id = /*!80000 549 AND conv_id = */ 12934");
  ASSERT_TRUE(where);
  EXPECT_EQ(toSExpr(*where, "SELECT COUNT(*) FROM msg WHERE conv_id = /*!80000 549 AND conv_id = */ 12934")
                .find("549"),
            std::string::npos);
}

TEST(Dialect, MultiByteCharacterLengths) {
  auto len = [](Charset cs, std::string bytes) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    return mbCharLength(cs, p, p + bytes.size());
  };
  EXPECT_EQ(len(Charset::kGbk, "\x95\x5C"), 2u);
  EXPECT_EQ(len(Charset::kGbk, "\x95\x27"), 0u);
  EXPECT_EQ(len(Charset::kGbk, "\x95\x22"), 0u);
  EXPECT_EQ(len(Charset::kGbk, "\x95"), 0u);  // truncated
  EXPECT_EQ(len(Charset::kGbk, "\x80\x5C"), 1u);
  EXPECT_EQ(len(Charset::kBig5, "\xA5\x5C"), 2u);
  EXPECT_EQ(len(Charset::kBig5, "\xA5\x80"), 0u);
  EXPECT_EQ(len(Charset::kBig5, "\x95\x5C"), 1u);
  EXPECT_EQ(len(Charset::kSjis, "\x83\x5C"), 2u);
  EXPECT_EQ(len(Charset::kSjis, "\xB1\x5C"), 1u);  // half-width katakana
  EXPECT_EQ(len(Charset::kCp932, "\xFC\x5C"), 2u);
  EXPECT_EQ(len(Charset::kCp932, "\xFD\x5C"), 1u);
  EXPECT_EQ(len(Charset::kEuckr, "\x81\x41"), 2u);
  EXPECT_EQ(len(Charset::kEuckr, "\x81\x5C"), 0u);
  EXPECT_EQ(len(Charset::kGb2312, "\xB0\x5C"), 0u);
  EXPECT_EQ(len(Charset::kUjis, "\x8F\xA1\xA1"), 3u);
  EXPECT_EQ(len(Charset::kUjis, "\x8E\xE0"), 0u);
  EXPECT_EQ(len(Charset::kEucjpms, "\xA1\xA1"), 2u);
  EXPECT_EQ(len(Charset::kUtf8mb4, "\x95\x5C"), 1u);
}

TEST(Dialect, MultiByteIdentifiersAndQuotedNames) {
  Dialect gbk;
  gbk.charset = Charset::kGbk;
  // 0x60 (backtick) as a trail byte inside a quoted name; 0x5C in a bare one.
  const std::string quoted = "SELECT `a\x95\x60` FROM t";
  auto tokens = tokenize(quoted, gbk);
  ASSERT_EQ(tokens[1].kind, TokenKind::kQuotedIdentifier);
  EXPECT_EQ(tokens[1].text(quoted), "`a\x95\x60`");
  // utf8mb4 reads `` as an escaped backtick: the name never ends.
  EXPECT_EQ(tokenize(quoted)[1].kind, TokenKind::kErrorUnterminatedQuotedIdentifier);
  const std::string bare = "SELECT a\x95\x5C FROM t";
  EXPECT_EQ(tokenize(bare, gbk)[1].text(bare), "a\x95\x5C");
  const std::string broken = "SELECT \x95' FROM t";  // lead byte without trail
  EXPECT_EQ(tokenize(broken, gbk)[1].kind, TokenKind::kErrorBadCharacter);
  EXPECT_EQ(unquoteString("'\x95\x5C'", gbk), "\x95\x5C");
  EXPECT_EQ(unquoteString("'a\\'b\x95\x5C\\''", gbk), "a'b\x95\x5C'");
}

TEST(Dialect, ModesInTheParser) {
  Dialect pipes = fromSqlMode("PIPES_AS_CONCAT");
  const std::string concat = "SELECT a FROM t WHERE conv_id = 1 || 2";
  auto r = parse(concat, pipes);
  ASSERT_TRUE(r);
  EXPECT_NE(toSExpr(*r, concat).find("(concat"), std::string::npos) << toSExpr(*r, concat);
  auto d = parse(concat);
  ASSERT_TRUE(d);
  EXPECT_NE(toSExpr(*d, concat).find("(or"), std::string::npos);

  const std::string not_sql = "SELECT a FROM t WHERE NOT conv_id = 5";
  Dialect high = fromSqlMode("HIGH_NOT_PRECEDENCE");
  auto h = parse(not_sql, high);
  ASSERT_TRUE(h);
  auto n = parse(not_sql);
  ASSERT_TRUE(n);
  EXPECT_NE(toSExpr(*h, not_sql), toSExpr(*n, not_sql));
  EXPECT_NE(toSExpr(*h, not_sql).find("(= (not"), std::string::npos) << toSExpr(*h, not_sql);

  const std::string ansi = "SELECT \"conv_id\" FROM msg WHERE \"conv_id\" = 5";
  auto a = parse(ansi, fromSqlMode("ANSI"));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->select->where->args[0]->kind, ExprKind::kColumn);
  EXPECT_EQ(unquoteIdentifier("\"a\"\"b\""), "a\"b");
  EXPECT_EQ(unquoteIdentifier("[a]]b]"), "a]b");

  Dialect nbe = fromSqlMode("NO_BACKSLASH_ESCAPES");
  EXPECT_EQ(tokenize("SELECT 'a\\' , 'b'", nbe)[1].kind, TokenKind::kString);
  EXPECT_EQ(tokenize("SELECT 'a\\' , 'b'")[1].kind, TokenKind::kString);
  EXPECT_EQ(tokenize("SELECT 'a\\' , 'b'", nbe).size(), 5u);  // SELECT 'a\' , 'b' End
  EXPECT_EQ(tokenize("SELECT 'a\\' , 'b'").size(), 4u);       // SELECT 'a\' , ' b '... unterminated
}

std::vector<std::string> split(const std::string& sql, const Dialect& dialect = {}) {
  std::vector<std::string> out;
  for (const StatementSpan& s : splitStatements(sql, dialect)) out.emplace_back(s.text(sql));
  return out;
}

using V = std::vector<std::string>;

TEST(SplitStatements, PlainStatements) {
  EXPECT_EQ(split("SELECT 1; SELECT 2"), (V{"SELECT 1", "SELECT 2"}));
  EXPECT_EQ(split("SELECT 1;"), (V{"SELECT 1"}));
  EXPECT_EQ(split("  SELECT ';' ; \n SELECT \";\"  "), (V{"SELECT ';' ", "SELECT \";\"  "}));
  EXPECT_EQ(split("SELECT 1 /* ; */; -- ;\nSELECT 2 # ;"), (V{"SELECT 1 /* ; */", "-- ;\nSELECT 2 # ;"}));
  EXPECT_EQ(split("SET @a = 1; SELECT `;`"), (V{"SET @a = 1", "SELECT `;`"}));
  EXPECT_EQ(split(";; SELECT 1 ;;"), (V{"SELECT 1 "}));
  EXPECT_EQ(split("/* only */ ; SELECT 1"), (V{"SELECT 1"}));
  EXPECT_EQ(split("SELECT 'a;"), (V{"SELECT 'a;"}));  // unterminated: one broken statement
  // A versioned comment: executed content splits, skipped content does not.
  EXPECT_EQ(split("SELECT 1 /*!; SELECT 2 */"), (V{"SELECT 1 /*!", "SELECT 2 */"}));
  EXPECT_EQ(split("SELECT 1 /*!99999 ; SELECT 2 */"), (V{"SELECT 1 /*!99999 ; SELECT 2 */"}));
  // DELIMITER is a client command: the server sees "DELIMITER $$ ..." as SQL.
  EXPECT_EQ(split("DELIMITER $$; SELECT 1"), (V{"DELIMITER $$", "SELECT 1"}));
}

TEST(SplitStatements, MultiByteAndModes) {
  Dialect gbk;
  gbk.charset = Charset::kGbk;
  const std::string sql = "INSERT INTO t VALUES ('\x95\\'); DELETE FROM msg";
  EXPECT_EQ(split(sql, gbk).size(), 2u);
  EXPECT_EQ(split(sql).size(), 1u);  // utf8mb4: the quote is escaped
  EXPECT_EQ(split("SELECT 'a\\'; SELECT 'b'", fromSqlMode("NO_BACKSLASH_ESCAPES")).size(), 2u);
}

TEST(SplitStatements, CompoundStatements) {
  EXPECT_EQ(split("CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END; CALL p()"),
            (V{"CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", "CALL p()"}));
  EXPECT_EQ(split("CREATE DEFINER=`root`@`localhost` TRIGGER tr BEFORE INSERT ON t FOR EACH ROW "
                  "BEGIN IF NEW.a > 0 THEN SET NEW.b = 1; ELSE SET NEW.b = 2; END IF; END; SELECT 1")
                .size(),
            2u);
  EXPECT_EQ(split("CREATE FUNCTION f(x INT) RETURNS INT DETERMINISTIC BEGIN DECLARE y INT; "
                  "SET y = CASE WHEN x > 0 THEN 1 ELSE 2 END; RETURN y; END; SELECT f(1)")
                .size(),
            2u);
  EXPECT_EQ(split("CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO BEGIN DELETE FROM t; END; SELECT 1").size(), 2u);
  EXPECT_EQ(split("BEGIN NOT ATOMIC DECLARE a INT; lbl: LOOP LEAVE lbl; END LOOP; SELECT 1; END; SELECT 2"),
            (V{"BEGIN NOT ATOMIC DECLARE a INT; lbl: LOOP LEAVE lbl; END LOOP; SELECT 1; END", "SELECT 2"}));
  EXPECT_EQ(split("IF 1 THEN SELECT 1; ELSEIF 2 THEN SELECT 2; END IF; SELECT 3").size(), 2u);
  EXPECT_EQ(split("WHILE 0 DO SELECT 1; END WHILE; SELECT 3").size(), 2u);
  EXPECT_EQ(split("BEGIN NOT ATOMIC REPEAT SELECT 1; UNTIL 1 END REPEAT; END; SELECT 3").size(), 2u);
  EXPECT_EQ(split("BEGIN NOT ATOMIC DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN SELECT 1; END; "
                  "SELECT 2; END; SELECT 3")
                .size(),
            2u);
  EXPECT_EQ(split("BEGIN NOT ATOMIC FOR i IN 1..3 DO SELECT i; END FOR; END; SELECT 3").size(), 2u);
  // Transactions and functions named like blocks are not blocks.
  EXPECT_EQ(split("BEGIN; SELECT 1; COMMIT"), (V{"BEGIN", "SELECT 1", "COMMIT"}));
  EXPECT_EQ(split("BEGIN WORK; SELECT 1"), (V{"BEGIN WORK", "SELECT 1"}));
  EXPECT_EQ(split("SELECT IF(1, 2, 3), REPEAT('a', 2); SELECT CASE 1 WHEN 1 THEN 2 END; SELECT 3").size(), 3u);
  EXPECT_EQ(split("CREATE PROCEDURE IF NOT EXISTS p() SELECT 1; CALL p()").size(), 2u);
  EXPECT_EQ(split("CREATE FUNCTION f() RETURNS INT RETURN IF(1, 2, 3); SELECT f()").size(), 2u);
  EXPECT_EQ(split("CREATE TABLE t (a INT); SELECT 1 FOR UPDATE; SELECT 2").size(), 3u);
}

}  // namespace
}  // namespace sp::parser
