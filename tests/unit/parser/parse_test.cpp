// Targeted parser tests: the properties the routing rewriter depends on
// (byte ranges, placeholder numbering, no copies), error values, and
// robustness on truncated input.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "parser/ast_walk.hpp"
#include "parser/parse.hpp"

namespace sp::parser {
namespace {

struct Edit {
  SourceRange range;
  std::string replacement;
};

std::string applyEdits(std::string_view sql, std::vector<Edit> edits) {
  std::sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.range.begin > b.range.begin; });
  std::string out(sql);
  for (const Edit& e : edits) out.replace(e.range.begin, e.range.end - e.range.begin, e.replacement);
  return out;
}

TEST(Parse, RewriteTableAndQualifiersByteForByte) {
  const std::string sql =
      "SELECT msg.seq, `msg`.body FROM `app`.`msg` WHERE msg.seq > ? ORDER BY msg.seq LIMIT 10";
  ParseResult result = parse(sql);
  ASSERT_TRUE(result) << result.error().message;
  std::vector<Edit> edits;
  AstVisitor visitor;
  visitor.on_table_ref = [&](const TableRef& t) {
    if (t.kind == TableRefKind::kTable && t.name.table.value == "msg") {
      edits.push_back({t.name.table.range, "`msg_03`"});
    }
  };
  visitor.on_expr = [&](const Expr& e) {
    if (e.kind == ExprKind::kColumn && e.column.table.value == "msg") {
      edits.push_back({e.column.table.range, e.column.table.quoted ? "`msg_03`" : "msg_03"});
    }
  };
  walk(*result, visitor);
  EXPECT_EQ(applyEdits(sql, edits),
            "SELECT msg_03.seq, `msg_03`.body FROM `app`.`msg_03` WHERE msg_03.seq > ? "
            "ORDER BY msg_03.seq LIMIT 10");
}

TEST(Parse, InsertTableNameRange) {
  const std::string sql = "INSERT INTO  db1 . `orders` (id) VALUES (?)";
  ParseResult result = parse(sql);
  ASSERT_TRUE(result);
  const TableName& name = result->insert->table;
  EXPECT_EQ(name.db.range.text(sql), "db1");
  EXPECT_EQ(name.table.range.text(sql), "`orders`");
  EXPECT_EQ(name.table.value, "orders");
  EXPECT_TRUE(name.table.quoted);
  EXPECT_EQ(name.range.text(sql), "db1 . `orders`");
}

TEST(Parse, NamesPointIntoTheQueryBuffer) {
  const std::string sql = "SELECT a FROM t WHERE b = 'x'";
  ParseResult result = parse(sql);
  ASSERT_TRUE(result);
  const std::string_view name = result->select->from[0]->name.table.value;
  EXPECT_GE(name.data(), sql.data());
  EXPECT_LE(name.data() + name.size(), sql.data() + sql.size());
}

TEST(Parse, ExpressionRangesIncludeParentheses) {
  const std::string sql = "SELECT (a + b) * 2 AS x FROM t";
  ParseResult result = parse(sql);
  ASSERT_TRUE(result);
  const SelectItem& item = result->select->items[0];
  EXPECT_EQ(item.expr->range.text(sql), "(a + b) * 2");
  EXPECT_EQ(item.expr->args[0]->range.text(sql), "(a + b)");
  EXPECT_EQ(item.range.text(sql), "(a + b) * 2 AS x");
  EXPECT_EQ(item.alias.value, "x");
}

TEST(Parse, PlaceholdersNumberedInTextOrder) {
  const std::string sql =
      "SELECT ? FROM t WHERE a IN (SELECT b FROM u WHERE c = ?) AND d BETWEEN ? AND ? LIMIT ?, ?";
  ParseResult result = parse(sql);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->placeholder_count, 6u);
  const SelectStatement& s = *result->select;
  EXPECT_EQ(s.items[0].expr->placeholder_index, 0u);
  EXPECT_EQ(s.limit.offset->placeholder_index, 4u);
  EXPECT_EQ(s.limit.count->placeholder_index, 5u);
  const Expr& between = *s.where->args[1];
  ASSERT_EQ(between.kind, ExprKind::kBetween);
  EXPECT_EQ(between.args[1]->placeholder_index, 2u);
  EXPECT_EQ(between.args[2]->placeholder_index, 3u);
}

TEST(Parse, LiteralKindsAndText) {
  const std::string sql = "SELECT 1, -2, 3.5, 4e1, 'a''b', X'0F', b'1', NULL, TRUE, FALSE, ?";
  ParseResult result = parse(sql);
  ASSERT_TRUE(result);
  const std::vector<std::pair<LiteralKind, std::string_view>> expected = {
      {LiteralKind::kInteger, "1"},   {LiteralKind::kInteger, "-2"}, {LiteralKind::kDecimal, "3.5"},
      {LiteralKind::kFloat, "4e1"},   {LiteralKind::kString, "'a''b'"}, {LiteralKind::kHex, "X'0F'"},
      {LiteralKind::kBit, "b'1'"},    {LiteralKind::kNull, "NULL"},  {LiteralKind::kTrue, "TRUE"},
      {LiteralKind::kFalse, "FALSE"}, {LiteralKind::kPlaceholder, "?"}};
  const auto& items = result->select->items;
  ASSERT_EQ(items.size(), expected.size());
  for (size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(items[i].expr->kind, ExprKind::kLiteral) << i;
    EXPECT_EQ(items[i].expr->literal_kind, expected[i].first) << i;
    EXPECT_EQ(items[i].expr->range.text(sql), expected[i].second) << i;
  }
}

TEST(Parse, ColumnQualifierParts) {
  const std::string sql = "SELECT db.t.c, t.c, c FROM t";
  ParseResult result = parse(sql);
  ASSERT_TRUE(result);
  const auto& items = result->select->items;
  EXPECT_EQ(items[0].expr->column.db.value, "db");
  EXPECT_EQ(items[0].expr->column.table.range.text(sql), "t");
  EXPECT_EQ(items[0].expr->column.table.range.begin, 10u);
  EXPECT_TRUE(items[1].expr->column.db.empty());
  EXPECT_EQ(items[1].expr->column.table.value, "t");
  EXPECT_TRUE(items[2].expr->column.table.empty());
  EXPECT_EQ(items[2].expr->column.column.value, "c");
}

TEST(Parse, ErrorIsAValueWithOffset) {
  ParseResult result = parse("SELECT a FROM t WHERE");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().offset, 21u);
  EXPECT_EQ(result.error().message, "expected expression at offset 21 near ''");

  result = parse("UPDATE t SET a = 1 WHERE b = 'oops");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().offset, 29u);
  EXPECT_EQ(result.error().message, "unterminated string at offset 29 near ''oops'");
}

TEST(Parse, ErrorContextDoesNotSplitUtf8) {
  // 28 ASCII bytes then a 2-byte character straddling the 30-byte window.
  const std::string sql = "SELECT a FROM t WHERE FROM xxxxxxxxxxxxxxxxxxxxxxxx\xc3\xa9tail";
  ParseResult result = parse(sql);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "expected expression at offset 22 near 'FROM xxxxxxxxxxxxxxxxxxxxxxxx'");
}

TEST(Parse, OtherStatementsHaveKindOnly) {
  ParseResult result = parse("SET NAMES utf8mb4;");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->kind, StatementKind::kSet);
  EXPECT_FALSE(result->select || result->insert || result->update || result->del);
  EXPECT_EQ(result->range.text("SET NAMES utf8mb4;"), "SET NAMES utf8mb4");
}

TEST(Parse, StatementRangeExcludesSemicolonAndComments) {
  const std::string sql = "  /* c */ SELECT 1 ;  ";
  ParseResult result = parse(sql);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->range.text(sql), "SELECT 1");
}

TEST(Parse, WalkerFindsEveryTable) {
  const std::string sql =
      "SELECT * FROM a JOIN (SELECT x FROM b) d ON a.id = d.x "
      "WHERE a.k IN (SELECT k FROM c) AND EXISTS (SELECT 1 FROM e)";
  ParseResult result = parse(sql);
  ASSERT_TRUE(result);
  std::vector<std::string> tables;
  AstVisitor visitor;
  visitor.on_table_ref = [&](const TableRef& t) {
    if (t.kind == TableRefKind::kTable) tables.emplace_back(t.name.table.value);
  };
  walk(*result, visitor);
  std::sort(tables.begin(), tables.end());
  EXPECT_EQ(tables, (std::vector<std::string>{"a", "b", "c", "e"}));
}

TEST(Parse, InsertRowsAndRanges) {
  const std::string sql = "INSERT INTO t (id, v) VALUES (1, 'a'), (2, 'b')";
  ParseResult result = parse(sql);
  ASSERT_TRUE(result);
  const InsertStatement& insert = *result->insert;
  ASSERT_EQ(insert.rows.size(), 2u);
  EXPECT_EQ(insert.row_ranges[1].text(sql), "(2, 'b')");
  EXPECT_EQ(insert.rows[1][1]->range.text(sql), "'b'");
  EXPECT_EQ(insert.columns[0].value, "id");
}

TEST(Parse, EveryPrefixOfAQueryParsesOrFailsCleanly) {
  const std::string sql =
      "SELECT DISTINCT t.a AS x, COUNT(*), CASE WHEN b IN (1, ?) THEN 'y' END FROM db.t AS t "
      "LEFT JOIN u USING (id) WHERE c BETWEEN 1 AND 2 AND d LIKE 'x%' OR NOT EXISTS (SELECT 1) "
      "GROUP BY 1 HAVING SUM(e) > 2 ORDER BY 2 DESC LIMIT 3, 4 FOR UPDATE";
  for (size_t n = 0; n <= sql.size(); ++n) {
    const std::string prefix = sql.substr(0, n);
    ParseResult result = parse(prefix);
    if (!result) {
      EXPECT_LE(result.error().offset, prefix.size()) << prefix;
      EXPECT_NE(result.error().message.find(" at offset "), std::string::npos) << prefix;
    }
  }
  EXPECT_TRUE(parse(sql).has_value());
}

TEST(Parse, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = "SELECT " + std::string(10000, '(') + "1" + std::string(10000, ')');
  EXPECT_FALSE(parse(deep).has_value());
  const std::string unary = "SELECT " + std::string(10000, '-') + "1";
  EXPECT_FALSE(parse(unary).has_value());
  const std::string nots = "SELECT " + [] {
    std::string s;
    for (int i = 0; i < 10000; ++i) s += "NOT ";
    return s;
  }() + "1";
  EXPECT_FALSE(parse(nots).has_value());
  const std::string moderate = "SELECT " + std::string(30, '(') + "1" + std::string(30, ')');
  EXPECT_TRUE(parse(moderate).has_value());
}

}  // namespace
}  // namespace sp::parser

namespace sp::parser {
namespace {

// Window functions: the partition and order expressions are parsed (the
// rewriter renames qualified columns in them); the frame stays text.
TEST(ParseWindow, OverClauseAndWindowClause) {
  const std::string sql =
      "SELECT ROW_NUMBER() OVER (PARTITION BY m.conv_id ORDER BY m.seq DESC ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), "
      "SUM(seq) OVER w FROM msg m WINDOW w AS (ORDER BY seq)";
  auto st = parse(sql);
  ASSERT_TRUE(st.has_value()) << st.error().message;
  EXPECT_TRUE(st->uses_window_functions);
  const Expr& rn = *st->select->items[0].expr;
  EXPECT_TRUE(rn.window);
  ASSERT_EQ(rn.window_partition.size(), 1u);
  EXPECT_EQ(rn.window_partition[0]->column.table.value, "m");
  ASSERT_EQ(rn.window_order.size(), 1u);
  EXPECT_TRUE(rn.window_order[0].descending);
  EXPECT_TRUE(st->select->items[1].expr->window);
  EXPECT_EQ(st->select->window_order.size(), 1u);
  auto plain = parse("SELECT COUNT(*) FROM msg");
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->uses_window_functions);
  EXPECT_FALSE(parse("SELECT COUNT(*) OVER (ORDER BY) FROM msg").has_value());
}

}  // namespace
}  // namespace sp::parser
