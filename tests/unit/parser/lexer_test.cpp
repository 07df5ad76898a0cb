#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "parser/lexer.hpp"

namespace sp::parser {
namespace {

// "Kind:text" for every token (including whitespace/comments) except kEnd.
std::vector<std::string> allTokens(std::string_view sql) {
  std::vector<std::string> out;
  Lexer lexer(sql);
  for (Token t = lexer.next(); !t.is(TokenKind::kEnd); t = lexer.next()) {
    out.push_back(std::string(tokenKindName(t.kind)) + ":" + std::string(t.text(sql)));
  }
  return out;
}

std::vector<std::string> significant(std::string_view sql) {
  std::vector<std::string> out;
  for (const Token& t : tokenize(sql)) {
    if (t.is(TokenKind::kEnd)) break;
    out.push_back(std::string(tokenKindName(t.kind)) + ":" + std::string(t.text(sql)));
  }
  return out;
}

using V = std::vector<std::string>;

struct LexCase {
  const char* name;
  const char* sql;
  V expected;  // significant tokens
};

class LexTable : public ::testing::TestWithParam<LexCase> {};

TEST_P(LexTable, SignificantTokens) {
  EXPECT_EQ(significant(GetParam().sql), GetParam().expected) << GetParam().sql;
}

const LexCase kLexCases[] = {
    {"identifiers", "abc _x $y t1 caf\xc3\xa9",
     {"Identifier:abc", "Identifier:_x", "Identifier:$y", "Identifier:t1", "Identifier:caf\xc3\xa9"}},
    {"digit_leading_identifier", "2024_logs 1e 0xZZ",
     {"Identifier:2024_logs", "Identifier:1e", "Identifier:0xZZ"}},
    {"backticks", "`a b` `x``y` ``",
     {"QuotedIdentifier:`a b`", "QuotedIdentifier:`x``y`", "QuotedIdentifier:``"}},
    {"integers", "0 42 18446744073709551615", {"Integer:0", "Integer:42", "Integer:18446744073709551615"}},
    {"decimals", "1.5 .5 3.", {"Decimal:1.5", "Decimal:.5", "Decimal:3."}},
    {"floats", "1e10 1.5E-3 2e+7 .5e1", {"Float:1e10", "Float:1.5E-3", "Float:2e+7", "Float:.5e1"}},
    {"qualified_dot_not_decimal", "t.5", {"Identifier:t", ".:.", "Integer:5"}},
    {"strings", R"('a' "b" 'it''s' 'a\'b' "x""y" '')",
     {"String:'a'", "String:\"b\"", "String:'it''s'", R"(String:'a\'b')", "String:\"x\"\"y\"",
      "String:''"}},
    {"introducers", "_utf8mb4'x' N'y' n'z' _binary\"w\"",
     {"String:_utf8mb4'x'", "String:N'y'", "String:n'z'", "String:_binary\"w\""}},
    {"hex", "X'0aFF' x'' 0x1f", {"HexString:X'0aFF'", "HexString:x''", "HexString:0x1f"}},
    {"bits", "b'0101' B'1' 0b11", {"BitString:b'0101'", "BitString:B'1'", "BitString:0b11"}},
    {"placeholders", "a=? AND b IN (?,?)",
     {"Identifier:a", "=:=", "Placeholder:?", "Identifier:AND", "Identifier:b", "Identifier:IN",
      "(:(", "Placeholder:?", ",:,", "Placeholder:?", "):)"}},
    {"user_variables", "@x @a.b_c$ @'q v' @`b` @\"d\"",
     {"UserVariable:@x", "UserVariable:@a.b_c$", "UserVariable:@'q v'", "UserVariable:@`b`",
      "UserVariable:@\"d\""}},
    {"system_variables", "@@sql_mode @@session.x @@GLOBAL.y @@local.z @@foo.bar",
     {"SystemVariable:@@sql_mode", "SystemVariable:@@session.x", "SystemVariable:@@GLOBAL.y",
      "SystemVariable:@@local.z", "SystemVariable:@@foo", ".:.", "Identifier:bar"}},
    {"comparison_ops", "= <=> <> != < <= > >=",
     {"=:=", "<=>:<=>", "<>:<>", "<>:!=", "<:<", "<=:<=", ">:>", ">=:>="}},
    {"arithmetic_ops", "+ - * / % << >> & | ^ ~ !",
     {"+:+", "-:-", "*:*", "/:/", "%:%", "<<:<<", ">>:>>", "&:&", "|:|", "^:^", "~:~", "!:!"}},
    {"logical_ops", "&& || := . , ; ( ) -> ->>",
     {"&&:&&", "||:||", ":=::=", ".:.", ",:,", ";:;", "(:(", "):)", "->:->", "->>:->>"}},
    {"div_mod_are_words", "a DIV b MOD c", {"Identifier:a", "Identifier:DIV", "Identifier:b",
                                            "Identifier:MOD", "Identifier:c"}},
    {"double_minus_without_space", "1--1", {"Integer:1", "-:-", "-:-", "Integer:1"}},
    {"comments_skipped", "a /* x */ b -- c\nd # e\nf --\tg\nh --",
     {"Identifier:a", "Identifier:b", "Identifier:d", "Identifier:f", "Identifier:h"}},
    {"hint_skipped", "SELECT /*+ MAX_EXECUTION_TIME(1) */ 1",
     {"Identifier:SELECT", "Integer:1"}},
    {"version_comment_lexed", "/*!40101 SET x=1 */;",
     {"Identifier:SET", "Identifier:x", "=:=", "Integer:1", ";:;"}},
    {"version_comment_no_number", "/*! STRAIGHT_JOIN */ a",
     {"Identifier:STRAIGHT_JOIN", "Identifier:a"}},
    {"mariadb_version_comment", "/*M!100100 b */", {"Identifier:b"}},
    {"star_slash_outside_version_comment", "2*/3", {"Integer:2", "*:*", "/:/", "Integer:3"}},
    {"unterminated_string", "'abc", {"ErrorUnterminatedString:'abc"}},
    {"unterminated_string_escape", R"('ab\')", {R"(ErrorUnterminatedString:'ab\')"}},
    {"unterminated_comment", "a /* b", {"Identifier:a", "ErrorUnterminatedComment:/* b"}},
    {"unterminated_version_comment", "/*!50110 x", {"ErrorUnterminatedComment:/*!50110 x"}},
    // The only "*/" is inside a string: the error is reported at the end.
    {"version_comment_closed_only_in_string", "/*!50110 '*/' x",
     {"String:'*/'", "Identifier:x", "ErrorUnterminatedComment:"}},
    {"unterminated_backtick", "`abc", {"ErrorUnterminatedQuotedIdentifier:`abc"}},
    {"bad_characters", "a { } [ \\ : @ b",
     {"Identifier:a", "ErrorBadCharacter:{", "ErrorBadCharacter:}", "ErrorBadCharacter:[",
      "ErrorBadCharacter:\\", "ErrorBadCharacter::", "ErrorBadCharacter:@", "Identifier:b"}},
    {"bad_literals", "X'1' X'zz' b'2'",
     {"ErrorBadLiteral:X'1'", "ErrorBadLiteral:X'zz'", "ErrorBadLiteral:b'2'"}},
    {"empty", "", {}},
    {"only_comments", " /* a */ -- b\n# c", {}},
};

INSTANTIATE_TEST_SUITE_P(Lexer, LexTable, ::testing::ValuesIn(kLexCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Lexer, WhitespaceAndCommentTokensAreReturnedByNext) {
  EXPECT_EQ(allTokens("a /* c */\n-- d\nb /*+ h */"),
            (V{"Identifier:a", "Whitespace: ", "Comment:/* c */", "Whitespace:\n", "Comment:-- d",
               "Whitespace:\n", "Identifier:b", "Whitespace: ", "Hint:/*+ h */"}));
  EXPECT_EQ(allTokens("/*!50110 k */"),
            (V{"VersionCommentBegin:/*!50110", "Whitespace: ", "Identifier:k", "Whitespace: ",
               "VersionCommentEnd:*/"}));
}

TEST(Lexer, PositionsPointIntoTheQuery) {
  const std::string_view sql = "SELECT  `a`, 'x' FROM t";
  auto tokens = tokenize(sql);
  ASSERT_EQ(tokens.size(), 7u);
  EXPECT_EQ(tokens[0].begin, 0u);
  EXPECT_EQ(tokens[0].end, 6u);
  EXPECT_EQ(tokens[1].begin, 8u);
  EXPECT_EQ(tokens[1].end, 11u);
  EXPECT_EQ(tokens[2].begin, 11u);
  EXPECT_EQ(tokens[3].begin, 13u);
  EXPECT_EQ(tokens[3].end, 16u);
  EXPECT_EQ(tokens[5].text(sql), "t");
  EXPECT_EQ(tokens[6].kind, TokenKind::kEnd);
  EXPECT_EQ(tokens[6].begin, sql.size());
  EXPECT_EQ(tokens[6].end, sql.size());
}

TEST(Lexer, KeywordsAreCaseInsensitiveIdentifiers) {
  const std::string_view sql = "select SeLeCt `select` selects from_x";
  auto tokens = tokenize(sql);
  EXPECT_TRUE(tokens[0].isKeyword(Keyword::kSELECT));
  EXPECT_TRUE(tokens[1].isKeyword(Keyword::kSELECT));
  EXPECT_EQ(tokens[2].kind, TokenKind::kQuotedIdentifier);
  EXPECT_EQ(tokens[2].keyword, Keyword::kNone);
  EXPECT_EQ(tokens[3].keyword, Keyword::kNone);
  EXPECT_EQ(tokens[4].keyword, Keyword::kNone);
}

TEST(Lexer, KeywordLookup) {
  EXPECT_EQ(lookupKeyword("sql_calc_found_rows"), Keyword::kSQL_CALC_FOUND_ROWS);
  EXPECT_EQ(lookupKeyword("XOR"), Keyword::kXOR);
  EXPECT_EQ(lookupKeyword("xo"), Keyword::kNone);
  EXPECT_EQ(lookupKeyword(""), Keyword::kNone);
  EXPECT_EQ(lookupKeyword("averyveryverylongwordthatisnotakeyword"), Keyword::kNone);
  EXPECT_EQ(keywordName(Keyword::kSELECT), "SELECT");
  EXPECT_TRUE(isReservedKeyword(Keyword::kFROM));
  EXPECT_FALSE(isReservedKeyword(Keyword::kVALUE));
}

struct KeywordRow {
  std::string_view name;
  Keyword id;
  bool reserved;
};

#define SP_KEYWORD_ROW(name, reserved) KeywordRow{#name, Keyword::k##name, reserved},
const KeywordRow kAllKeywords[] = {SP_PARSER_KEYWORDS(SP_KEYWORD_ROW)};
#undef SP_KEYWORD_ROW

TEST(Lexer, EveryKeywordRoundTrips) {
  for (const KeywordRow& row : kAllKeywords) {
    std::string lower(row.name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(lookupKeyword(row.name), row.id) << row.name;
    EXPECT_EQ(lookupKeyword(lower), row.id) << lower;
    EXPECT_EQ(keywordName(row.id), row.name);
    EXPECT_EQ(isReservedKeyword(row.id), row.reserved) << row.name;
    EXPECT_EQ(lookupKeyword(std::string(row.name) + "X"), Keyword::kNone) << row.name;
  }
}

TEST(Lexer, EndIsSticky) {
  Lexer lexer("x");
  EXPECT_EQ(lexer.next().kind, TokenKind::kIdentifier);
  EXPECT_EQ(lexer.next().kind, TokenKind::kEnd);
  EXPECT_EQ(lexer.next().kind, TokenKind::kEnd);
}

TEST(Lexer, UnquoteHelpers) {
  EXPECT_EQ(unquoteIdentifier("`a``b`"), "a`b");
  EXPECT_EQ(unquoteIdentifier("plain"), "plain");
  EXPECT_EQ(unquoteString("'it''s'"), "it's");
  EXPECT_EQ(unquoteString(R"('a\nb\\c\'d')"), "a\nb\\c'd");
  EXPECT_EQ(unquoteString(R"("x""y")"), "x\"y");
  EXPECT_EQ(unquoteString("_utf8mb4'z'"), "z");
  EXPECT_EQ(unquoteString(R"('50\%')"), "50\\%");
  EXPECT_EQ(unquoteString("'a' 'b'\n\"c\""), "abc");
  EXPECT_EQ(unquoteString("_utf8mb4 'x'"), "x");
  EXPECT_EQ(unquoteString("DATE '2024-01-01'"), "2024-01-01");
  EXPECT_EQ(unquoteString("'a' /* 'no' */ 'b'"), "ab");
  EXPECT_EQ(unquoteString("no_quotes"), "no_quotes");
}

TEST(Lexer, NeverLoopsOnGarbage) {
  // Every byte value must make progress.
  std::string sql;
  for (int c = 1; c < 256; ++c) sql.push_back(static_cast<char>(c));
  auto tokens = tokenize(sql);
  EXPECT_EQ(tokens.back().kind, TokenKind::kEnd);
  EXPECT_LE(tokens.size(), sql.size() + 1);
}

}  // namespace
}  // namespace sp::parser

namespace sp::parser {
namespace {

// Found by the sql fuzz target (ASan heap-buffer-overflow): "/*" as the last
// two bytes of the text read one byte past its end to look for a hint's '+'.
TEST(Lexer, CommentOpenerAtTheVeryEndIsUnterminatedNotARead) {
  const std::string owned = "SELECT /*";  // exact size: the sanitizers see any overrun
  auto tokens = tokenize(std::string_view(owned.data(), owned.size()));
  ASSERT_GE(tokens.size(), 2u);
  EXPECT_EQ(tokens[tokens.size() - 2].kind, TokenKind::kErrorUnterminatedComment);
}

}  // namespace
}  // namespace sp::parser
