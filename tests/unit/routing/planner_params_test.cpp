// Planner pieces that golden files cannot show: bound `?` parameters,
// value conversion corner cases and the edit applier.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parser/parse.hpp"
#include "routing/plan.hpp"
#include "routing/rewrite.hpp"
#include "tests/unit/routing/test_backends.hpp"

namespace sp::routing {
namespace {


std::shared_ptr<const CompiledShardMap> paramsTestMap() {
  auto map = loadShardMap(std::string(SP_SOURCE_DIR) + "/tests/unit/routing/golden/shard_map.yaml", kBackends);
  EXPECT_TRUE(map.has_value());
  return map ? *map : nullptr;
}

ParamValue unsignedParam(uint64_t v) {
  ParamValue p;
  p.kind = ParamValue::Kind::kUnsigned;
  p.u = v;
  return p;
}

ParamValue signedParam(int64_t v) {
  ParamValue p;
  p.kind = ParamValue::Kind::kSigned;
  p.i = v;
  return p;
}

ParamValue stringParam(std::string s) {
  ParamValue p;
  p.kind = ParamValue::Kind::kString;
  p.s = std::move(s);
  return p;
}

ParamValue decimalParam(std::string s) {
  ParamValue p;
  p.kind = ParamValue::Kind::kDecimal;
  p.s = std::move(s);
  return p;
}

ParamValue doubleParam(double d) {
  ParamValue p;
  p.kind = ParamValue::Kind::kDouble;
  p.d = d;
  return p;
}

TEST(PlannerParams, SeedsRangeQueryRoutesWithBoundValues) {
  auto map = paramsTestMap();
  ASSERT_TRUE(map);
  const std::string sql =
      "SELECT seq, msg_id FROM msg WHERE conv_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?";
  std::vector<ParamValue> params = {unsignedParam(18446744073709551615ull), unsignedParam(1200), unsignedParam(50)};
  Plan plan = planQuery(sql, PlannerInput{*map, "db0", params});
  ASSERT_EQ(plan.kind, PlanKind::kRoute);
  EXPECT_EQ(plan.targets[0].physical_table, "msg_15");
  EXPECT_EQ(plan.targets[0].backend, "db1");
  // Placeholders stay placeholders: the backend statement is prepared with the same parameters.
  EXPECT_EQ(plan.targets[0].sql, "SELECT seq, msg_id FROM msg_15 WHERE conv_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?");
  EXPECT_TRUE(plan.depends_on_params);
}

// Found by fuzz_sql: a `?` inside a skipped window frame (or CAST type) was
// not counted, so the key took the frame's value and went to the wrong shard.
TEST(PlannerParams, PlaceholderInsideWindowFrameKeepsNumbering) {
  auto map = paramsTestMap();
  ASSERT_TRUE(map);
  const std::string sql =
      "SELECT SUM(seq) OVER (ORDER BY seq ROWS BETWEEN ? PRECEDING AND CURRENT ROW) FROM msg WHERE conv_id = ?";
  std::vector<ParamValue> params = {unsignedParam(2), unsignedParam(1)};
  Plan plan = planQuery(sql, PlannerInput{*map, "db0", params});
  ASSERT_EQ(plan.kind, PlanKind::kRoute);
  EXPECT_EQ(plan.targets[0].physical_table, "msg_01");
  auto parsed = parser::parse(sql);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->placeholder_count, 2u);
}

TEST(PlannerParams, ParameterKinds) {
  auto map = paramsTestMap();
  ASSERT_TRUE(map);
  const std::string sql = "SELECT * FROM msg WHERE conv_id = ?";
  struct Case {
    ParamValue param;
    PlanKind kind;
    const char* table_or_error;
  };
  const Case cases[] = {
      {signedParam(17), PlanKind::kRoute, "msg_01"},
      {signedParam(-17), PlanKind::kRefused, "negative_key"},
      {stringParam("18"), PlanKind::kRoute, "msg_02"},
      {stringParam("18x"), PlanKind::kRefused, "bad_key_value"},
      // MariaDB compares a string with the integer key as DECIMAL: exact past 2^53 (mysql2 binds BigInt so).
      {stringParam("9007199254740992"), PlanKind::kRoute, "msg_00"},
      {stringParam("18446744073709551615"), PlanKind::kRoute, "msg_15"},
      {stringParam(" 18 "), PlanKind::kRoute, "msg_02"},
      {stringParam("18446744073709551616"), PlanKind::kRefused, "bad_key_value"},
      // A DECIMAL parameter compares exactly (Java's BigInteger/BigDecimal), even past 2^53.
      {decimalParam("18446744073709551615"), PlanKind::kRoute, "msg_15"},
      {decimalParam("18446744073709551614.000"), PlanKind::kRoute, "msg_14"},
      {decimalParam("20"), PlanKind::kRoute, "msg_04"},
      {decimalParam("20.5"), PlanKind::kRefused, "bad_key_value"},
      {decimalParam("-20"), PlanKind::kRefused, "negative_key"},
      {decimalParam("18446744073709551616"), PlanKind::kRefused, "bad_key_value"},
      {doubleParam(19.0), PlanKind::kRoute, "msg_03"},
      {doubleParam(19.5), PlanKind::kRefused, "bad_key_value"},
      {ParamValue{}, PlanKind::kRoute, "msg_00"},  // NULL: matches nothing, provably empty
  };
  for (const auto& c : cases) {
    std::vector<ParamValue> params = {c.param};
    Plan plan = planQuery(sql, PlannerInput{*map, "db0", params});
    ASSERT_EQ(plan.kind, c.kind) << c.table_or_error;
    if (plan.kind == PlanKind::kRoute) {
      EXPECT_EQ(plan.targets[0].physical_table, c.table_or_error);
    } else {
      EXPECT_EQ(routeErrorInfo(plan.refusal->code).name, c.table_or_error);
    }
  }
}

// Float literals (how a DOUBLE parameter is written when a prepared statement
// runs as text) route when they hold an exact integer below 2^53, like DOUBLE parameters.
TEST(PlannerParams, FloatLiteralKeys) {
  auto map = paramsTestMap();
  ASSERT_TRUE(map);
  struct Case {
    const char* literal;
    PlanKind kind;
    const char* table_or_error;
  };
  const Case cases[] = {
      {"1.90000000000000000e+01", PlanKind::kRoute, "msg_03"},
      {"1.9E1", PlanKind::kRoute, "msg_03"},
      {"1.95e1", PlanKind::kRefused, "bad_key_value"},
      {"9.007199254740992e15", PlanKind::kRefused, "bad_key_value"},
      {"-1.9e1", PlanKind::kRefused, "negative_key"},
  };
  for (const auto& c : cases) {
    Plan plan = planQuery(std::string("SELECT * FROM msg WHERE conv_id = ") + c.literal, PlannerInput{*map, "db0"});
    ASSERT_EQ(plan.kind, c.kind) << c.literal;
    if (plan.kind == PlanKind::kRoute) {
      EXPECT_EQ(plan.targets[0].physical_table, c.table_or_error) << c.literal;
    } else {
      EXPECT_EQ(routeErrorInfo(plan.refusal->code).name, c.table_or_error) << c.literal;
    }
  }
}

TEST(PlannerParams, MissingParameterValuesGiveNoKey) {
  auto map = paramsTestMap();
  ASSERT_TRUE(map);
  Plan plan = planQuery("SELECT * FROM msg WHERE conv_id = ?", PlannerInput{*map, "db0", {}});
  ASSERT_EQ(plan.kind, PlanKind::kRefused);
  EXPECT_EQ(plan.refusal->code, RouteErrorCode::kMissingKey);
}

TEST(PlannerParams, MonthBoundsFromParameters) {
  auto map = paramsTestMap();
  ASSERT_TRUE(map);
  const std::string sql =
      "SELECT * FROM tg_channel_message WHERE peer_id = ? AND message_time >= ? AND message_time < ?";
  std::vector<ParamValue> params = {unsignedParam(1), stringParam("2025-01-01 00:00:00"),
                                    stringParam("2025-04-01 00:00:00")};
  Plan plan = planQuery(sql, PlannerInput{*map, "db0", params});
  ASSERT_EQ(plan.kind, PlanKind::kRoute);
  EXPECT_EQ(plan.targets[0].physical_table, "tg_channel_message_s02");
  EXPECT_EQ(plan.targets[0].sql,
            "SELECT * FROM tg_channel_message_s02 WHERE peer_id = ? AND message_time >= ? AND message_time < ? "
            "AND message_month >= '2025-01-01' AND message_month < '2025-04-01'");
  ASSERT_TRUE(plan.months);
  EXPECT_EQ(plan.months->span(), 3);

  std::vector<ParamValue> numeric = {unsignedParam(1), unsignedParam(20250101), stringParam("2025-04-01")};
  Plan bad = planQuery(sql, PlannerInput{*map, "db0", numeric});
  ASSERT_EQ(bad.kind, PlanKind::kRefused);
  EXPECT_EQ(bad.refusal->code, RouteErrorCode::kBadMonthValue);
}

TEST(PlannerParams, InsertWithParameters) {
  auto map = paramsTestMap();
  ASSERT_TRUE(map);
  const std::string sql =
      "INSERT INTO tg_channel_message (peer_id, message_id, message_month, message_time, ingested_at) "
      "VALUES (?, ?, ?, ?, NOW(3))";
  std::vector<ParamValue> good = {unsignedParam(7), unsignedParam(1), stringParam("2025-03-01"),
                                  stringParam("2025-03-31 23:59:59.999")};
  Plan plan = planQuery(sql, PlannerInput{*map, "db0", good});
  ASSERT_EQ(plan.kind, PlanKind::kRoute);
  EXPECT_EQ(plan.targets[0].physical_table, "tg_channel_message_s01");
  EXPECT_TRUE(plan.depends_on_params);

  std::vector<ParamValue> mismatch = {unsignedParam(7), unsignedParam(1), stringParam("2025-03-01"),
                                      stringParam("2025-04-01 00:00:00")};
  Plan refused = planQuery(sql, PlannerInput{*map, "db0", mismatch});
  ASSERT_EQ(refused.kind, PlanKind::kRefused);
  EXPECT_EQ(refused.refusal->code, RouteErrorCode::kMonthMismatch);
}

TEST(Rewrite, ApplyEditsInAnyOrder) {
  std::string sql = "SELECT a FROM t WHERE x";
  std::vector<TextEdit> edits = {{23, 23, " AND y"}, {14, 15, "t_01"}, {0, 0, "/* r */ "}};
  EXPECT_EQ(applyEdits(sql, edits), "/* r */ SELECT a FROM t_01 WHERE x AND y");
  EXPECT_EQ(applyEdits(sql, {}), sql);
}

TEST(Rewrite, RenamesEveryReferenceOnly) {
  const std::string sql = "SELECT msg.seq, `msg`.x, 'msg' FROM im.msg JOIN conv ON conv.id = msg.conv_id";
  auto parsed = parser::parse(sql);
  ASSERT_TRUE(parsed) << parsed.error().message;
  StatementRefs refs = collectRefs(*parsed);
  std::vector<TextEdit> edits;
  renameTable(refs, "msg", "msg_07", edits);
  EXPECT_EQ(applyEdits(sql, edits),
            "SELECT msg_07.seq, `msg_07`.x, 'msg' FROM im.msg_07 JOIN conv ON conv.id = msg_07.conv_id");
}

}  // namespace
}  // namespace sp::routing
