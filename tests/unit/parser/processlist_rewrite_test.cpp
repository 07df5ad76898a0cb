#include "parser/processlist_rewrite.hpp"

#include "parser/text_search.hpp"

#include <gtest/gtest.h>

namespace sp::parser {
namespace {

constexpr std::string_view kTable = "`_sp`.`PROCESSLIST`";

std::string rewrite(std::string_view sql, ProcesslistScope scope = {}) {
  return rewriteProcesslistTable(sql, kTable, 42, {}, scope).value_or("<none>");
}

TEST(ProcesslistRewrite, QualifiedAnyCaseAndQuoting) {
  EXPECT_EQ(rewrite("SELECT ID FROM information_schema.PROCESSLIST"), "SELECT ID FROM `_sp`.`PROCESSLIST`");
  EXPECT_EQ(rewrite("select id from INFORMATION_SCHEMA.processlist p"), "select id from `_sp`.`PROCESSLIST` p");
  EXPECT_EQ(rewrite("SELECT 1 FROM `information_schema`.`PROCESSLIST`"), "SELECT 1 FROM `_sp`.`PROCESSLIST`");
  EXPECT_EQ(rewrite("SELECT 1 FROM information_schema . `processlist`"), "SELECT 1 FROM `_sp`.`PROCESSLIST`");
  // A column qualified by the full name keeps working.
  EXPECT_EQ(rewrite("SELECT information_schema.PROCESSLIST.ID FROM information_schema.PROCESSLIST"),
            "SELECT `_sp`.`PROCESSLIST`.ID FROM `_sp`.`PROCESSLIST`");
}

TEST(ProcesslistRewrite, ConnectionIdBecomesTheSessionId) {
  EXPECT_EQ(rewrite("SELECT ID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()"),
            "SELECT ID FROM `_sp`.`PROCESSLIST` WHERE ID = (42)");
  EXPECT_EQ(rewrite("SELECT 1 FROM information_schema.PROCESSLIST WHERE ID=connection_id ( )"),
            "SELECT 1 FROM `_sp`.`PROCESSLIST` WHERE ID=(42)");
  // Never glued into a comment marker.
  EXPECT_EQ(rewrite("SELECT 1--CONNECTION_ID() FROM information_schema.PROCESSLIST"),
            "SELECT 1--(42) FROM `_sp`.`PROCESSLIST`");
  // A stored function of that name in a database is another function.
  EXPECT_EQ(rewrite("SELECT db.CONNECTION_ID() FROM information_schema.PROCESSLIST"),
            "SELECT db.CONNECTION_ID() FROM `_sp`.`PROCESSLIST`");
}

TEST(ProcesslistRewrite, StringsCommentsAndOtherNamesAreLeftAlone) {
  EXPECT_EQ(rewrite("SELECT 'information_schema.PROCESSLIST', 'CONNECTION_ID()' /* information_schema.PROCESSLIST */ "
                    "FROM information_schema.PROCESSLIST -- CONNECTION_ID()\n"),
            "SELECT 'information_schema.PROCESSLIST', 'CONNECTION_ID()' /* information_schema.PROCESSLIST */ "
            "FROM `_sp`.`PROCESSLIST` -- CONNECTION_ID()\n");
  EXPECT_EQ(rewrite("SELECT * FROM information_schema.TABLES"), "<none>");
  EXPECT_EQ(rewrite("SELECT * FROM x.information_schema.PROCESSLIST"), "<none>");
  EXPECT_EQ(rewrite("SELECT * FROM PROCESSLIST"), "<none>");
  EXPECT_EQ(rewrite("SELECT 'information_schema.PROCESSLIST'"), "<none>");
  EXPECT_EQ(rewrite("SELECT CONNECTION_ID()"), "<none>");
  // Executed version comments are SQL.
  EXPECT_EQ(rewrite("SELECT 1 FROM /*!40101 information_schema.PROCESSLIST */"),
            "SELECT 1 FROM /*!40101 `_sp`.`PROCESSLIST` */");
  // Text the lexer cannot read runs nowhere rewritten.
  EXPECT_EQ(rewrite("SELECT 1 FROM information_schema.PROCESSLIST WHERE INFO = 'x"), "<none>");
}

TEST(ProcesslistRewrite, BareNameInInformationSchema) {
  const ProcesslistScope in_is{true};
  EXPECT_EQ(rewrite("SELECT ID FROM PROCESSLIST", in_is), "SELECT ID FROM `_sp`.`PROCESSLIST`");
  EXPECT_EQ(rewrite("SELECT p.ID FROM TABLES t JOIN `processlist` p", in_is),
            "SELECT p.ID FROM TABLES t JOIN `_sp`.`PROCESSLIST` p");
  // Only in the table position: a column called PROCESSLIST is a column.
  EXPECT_EQ(rewrite("SELECT PROCESSLIST FROM t", in_is), "<none>");
  EXPECT_TRUE(readsProcesslistTable("SELECT * FROM processlist", {}, in_is));
  EXPECT_FALSE(readsProcesslistTable("SELECT * FROM processlist"));
  EXPECT_TRUE(readsProcesslistTable("SELECT * FROM information_schema.processlist WHERE 1"));
}

// MariaDB lowers information_schema table names with its utf8 case table:
// `PROCESSLİST` (U+0130) is the table there, and must not reach a backend.
TEST(ProcesslistRewrite, DottedCapitalIIsTheTableAsOnTheServer) {
  EXPECT_EQ(rewrite("SELECT ID FROM information_schema.PROCESSL\xC4\xB0ST"), "SELECT ID FROM `_sp`.`PROCESSLIST`");
  EXPECT_EQ(rewrite("SELECT ID FROM information_schema.`processl\xC4\xB0st`"), "SELECT ID FROM `_sp`.`PROCESSLIST`");
  EXPECT_TRUE(readsProcesslistTable("SELECT * FROM processl\xC4\xB0st", {}, ProcesslistScope{true}));
  // Other look-alikes are other names on the server (1109): left alone.
  EXPECT_FALSE(readsProcesslistTable("SELECT * FROM information_schema.PROCESSL\xC4\xB1ST"));   // dotless i
  EXPECT_FALSE(readsProcesslistTable("SELECT * FROM information_schema.PROCESSL\xC3\x8DST"));   // I acute
  EXPECT_FALSE(readsProcesslistTable("SELECT * FROM information_schema.PROCESSLIIST"));
  // In an 8-bit or East Asian client charset the letter has other bytes
  // (latin5's 0xDD): any one non-ASCII character there counts.
  Dialect latin1;
  latin1.charset = Charset::kLatin1;
  EXPECT_TRUE(readsProcesslistTable("SELECT * FROM information_schema.PROCESSL\xDDST", latin1));
  EXPECT_FALSE(readsProcesslistTable("SELECT * FROM information_schema.PROCESSL\xDD\xDD\xDD\xDDST", latin1));
}

// With information_schema as the default database, the table may follow a
// comma or a parenthesis of the FROM clause, not only FROM and JOIN.
TEST(ProcesslistRewrite, BareNameAfterCommaOrParenthesis) {
  const ProcesslistScope in_is{true};
  EXPECT_EQ(rewrite("SELECT * FROM TABLES, PROCESSLIST", in_is), "SELECT * FROM TABLES, `_sp`.`PROCESSLIST`");
  EXPECT_EQ(rewrite("SELECT * FROM (PROCESSLIST)", in_is), "SELECT * FROM (`_sp`.`PROCESSLIST`)");
  EXPECT_EQ(rewrite("SELECT * FROM TABLES STRAIGHT_JOIN PROCESSLIST", in_is),
            "SELECT * FROM TABLES STRAIGHT_JOIN `_sp`.`PROCESSLIST`");
  EXPECT_EQ(rewrite("SELECT PROCESSLIST(1) FROM t", in_is), "<none>");  // a function call
}

// The pre-filter every statement passes: exact for ASCII case, and any other
// byte (a quote, `_`, a non-ASCII letter) compares as itself.
TEST(ProcesslistRewrite, TextSearchIgnoresOnlyAsciiCase) {
  EXPECT_TRUE(containsIgnoringAsciiCase("SELECT 1 FROM InFoRmAtIoN_sChEmA.`PrOcEsSlIsT`", "processlist"));
  EXPECT_TRUE(containsIgnoringAsciiCase("processlist", "processlist"));
  EXPECT_TRUE(containsIgnoringAsciiCase("xx_KILL", "kill"));
  EXPECT_TRUE(containsIgnoringAsciiCase("anything", ""));
  EXPECT_FALSE(containsIgnoringAsciiCase("PROCESS``LIST", "processlist"));
  EXPECT_FALSE(containsIgnoringAsciiCase("processlis", "processlist"));
  EXPECT_FALSE(containsIgnoringAsciiCase("information-schema", "information_schema"));
  EXPECT_FALSE(containsIgnoringAsciiCase("information\x7Fschema", "information_schema"));
  EXPECT_FALSE(containsIgnoringAsciiCase("PROCESSL\xC4\xB0ST", "processlist"));  // a dotted capital I is not i
  EXPECT_FALSE(containsIgnoringAsciiCase("", "kill"));
}

TEST(ProcesslistRewrite, InformationSchemaNamesFoldTwoLetters) {
  EXPECT_TRUE(equalsInformationSchemaName("processlist", "PROCESSLIST"));
  EXPECT_TRUE(equalsInformationSchemaName("PROCESSL\xC4\xB0ST", "PROCESSLIST"));
  EXPECT_TRUE(equalsInformationSchemaName("\xE2\x84\xAA" "ey_column_usage", "KEY_COLUMN_USAGE"));
  EXPECT_FALSE(equalsInformationSchemaName("PROCESSL\xC4\xB1ST", "PROCESSLIST"));  // dotless i
  EXPECT_FALSE(equalsInformationSchemaName("PROCESSLIS", "PROCESSLIST"));
  EXPECT_FALSE(equalsInformationSchemaName("PROCESSLISTS", "PROCESSLIST"));
  EXPECT_FALSE(equalsInformationSchemaName("PROCESSL\xC4", "PROCESSLIST"));
}

// Statements that never spell the table are answered without lexing; those
// that do are still read token by token (strings and comments do not count).
TEST(ProcesslistRewrite, StatementsWithoutTheWordAreNotRead) {
  EXPECT_FALSE(readsProcesslistTable("SELECT c FROM sbtest1 WHERE id = 1"));
  EXPECT_FALSE(readsProcesslistTable("SELECT 'processlist' FROM t"));
  EXPECT_FALSE(readsProcesslistTable("SELECT 1 /* information_schema.processlist */"));
  EXPECT_TRUE(readsProcesslistTable("SELECT * FROM INFORMATION_SCHEMA.`ProcessList`"));
  EXPECT_EQ(rewrite("SELECT c FROM sbtest1 WHERE id = CONNECTION_ID()"), "<none>");
}

}  // namespace
}  // namespace sp::parser
