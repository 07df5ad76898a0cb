// Month helpers: literal parsing, month arithmetic and the exact month ranges
// derived from bounds on the month column and on the time column.
#include <gtest/gtest.h>

#include <string>

#include "routing/map/month.hpp"

namespace sp::routing {
namespace {

DateTimeValue dt(std::string_view text) {
  auto v = parseDateTime(text);
  EXPECT_TRUE(v.has_value()) << text;
  return v.value_or(DateTimeValue{});
}

MonthIndex mi(int year, int month) { return monthIndexOf({year, month, 1}); }

TEST(Month, ParsesAcceptedForms) {
  auto d = dt("2024-03-01");
  EXPECT_EQ(d.date, (CivilDate{2024, 3, 1}));
  EXPECT_FALSE(d.has_time);
  auto t = dt("2024-03-15 10:20:30");
  EXPECT_EQ(t.date, (CivilDate{2024, 3, 15}));
  EXPECT_TRUE(t.has_time);
  EXPECT_EQ(t.hour, 10);
  EXPECT_EQ(t.minute, 20);
  EXPECT_EQ(t.second, 30);
  EXPECT_EQ(t.microsecond, 0u);
  EXPECT_EQ(dt("2024-03-15T10:20:30").hour, 10);
  EXPECT_EQ(dt("2024-03-15 10:20:30.5").microsecond, 500000u);
  EXPECT_EQ(dt("2024-03-15 10:20:30.123").microsecond, 123000u);
  EXPECT_EQ(dt("2024-03-15 10:20:30.000001").microsecond, 1u);
  EXPECT_EQ(dt("2024-02-29").date.day, 29);
  EXPECT_EQ(dt("2000-02-29").date.day, 29);
  EXPECT_EQ(dt("9999-12-31 23:59:59.999999").date.year, 9999);
}

TEST(Month, RejectsEverythingElse) {
  const char* bad[] = {"",
                       "2024-3-01",
                       "2024-03-1",
                       "20240301",
                       "2024/03/01",
                       " 2024-03-01",
                       "2024-03-01 ",
                       "2024-00-10",
                       "2024-13-01",
                       "2024-02-30",
                       "2023-02-29",
                       "1900-02-29",
                       "0000-00-00",
                       "2024-04-31",
                       "2024-03-01 24:00:00",
                       "2024-03-01 10:60:00",
                       "2024-03-01 10:00:60",
                       "2024-03-01 10:00",
                       "2024-03-01 10:00:00.",
                       "2024-03-01 10:00:00.1234567",
                       "2024-03-01 10:00:00.12a",
                       "2024-03-01x10:00:00",
                       "2024-03-01 10:00:00 extra"};
  for (const char* text : bad) EXPECT_FALSE(parseDateTime(text).has_value()) << text;
}

TEST(Month, Arithmetic) {
  EXPECT_EQ(mi(2024, 1) + 1, mi(2024, 2));
  EXPECT_EQ(mi(2024, 12) + 1, mi(2025, 1));
  EXPECT_EQ(mi(2025, 1) - 1, mi(2024, 12));
  EXPECT_EQ(firstDayOf(mi(2024, 12) + 1), (CivilDate{2025, 1, 1}));
  EXPECT_EQ(formatMonthStart(mi(2025, 3)), "2025-03-01");
  EXPECT_EQ(formatMonthStart(mi(987, 11)), "0987-11-01");
  EXPECT_EQ(partitionName(mi(2024, 1)), "p202401");
  EXPECT_EQ(daysInMonth(2024, 2), 29);
  EXPECT_EQ(daysInMonth(2100, 2), 28);
  EXPECT_EQ(daysInMonth(2024, 12), 31);
  EXPECT_TRUE(isMonthStart(dt("2024-03-01")));
  EXPECT_TRUE(isMonthStart(dt("2024-03-01 00:00:00.000")));
  EXPECT_FALSE(isMonthStart(dt("2024-03-01 00:00:00.001")));
  EXPECT_FALSE(isMonthStart(dt("2024-03-02")));
  EXPECT_EQ(flip(CompareOp::kLt), CompareOp::kGt);
  EXPECT_EQ(flip(CompareOp::kGe), CompareOp::kLe);
  EXPECT_EQ(flip(CompareOp::kEq), CompareOp::kEq);
}

TEST(Month, SpanAndIntersection) {
  MonthRange r{mi(2025, 1), mi(2025, 3)};
  EXPECT_EQ(r.span(), 3);
  MonthRange open{mi(2025, 1), std::nullopt};
  EXPECT_FALSE(open.span().has_value());
  open.intersect({std::nullopt, mi(2025, 12)});
  EXPECT_EQ(open.span(), 12);
  MonthRange year_boundary{mi(2024, 11), mi(2025, 2)};
  EXPECT_EQ(year_boundary.span(), 4);
  MonthRange a{mi(2025, 1), mi(2025, 6)};
  a.intersect({mi(2025, 7), mi(2025, 9)});
  EXPECT_TRUE(a.isEmpty());
  EXPECT_EQ(a.span(), 0);
  MonthRange b{mi(2025, 1), mi(2025, 6)};
  b.intersect({mi(2024, 1), mi(2025, 3)});
  EXPECT_EQ(b, (MonthRange{mi(2025, 1), mi(2025, 3)}));
}

struct BoundCase {
  CompareOp op;
  const char* literal;
  std::optional<MonthIndex> lo;
  std::optional<MonthIndex> hi;
};

TEST(Month, TimeColumnBounds) {
  const auto none = std::nullopt;
  const BoundCase cases[] = {
      // >= and > keep the literal's month.
      {CompareOp::kGe, "2025-01-01 00:00:00", mi(2025, 1), none},
      {CompareOp::kGe, "2025-01-15 12:00:00", mi(2025, 1), none},
      {CompareOp::kGe, "2025-01-31 23:59:59.999999", mi(2025, 1), none},
      {CompareOp::kGt, "2025-01-01 00:00:00", mi(2025, 1), none},
      {CompareOp::kGt, "2025-01-31 23:59:59.999", mi(2025, 1), none},  // conservative superset
      // <= keeps the literal's month, even at its first instant.
      {CompareOp::kLe, "2025-04-01 00:00:00", none, mi(2025, 4)},
      {CompareOp::kLe, "2025-04-01", none, mi(2025, 4)},
      {CompareOp::kLe, "2025-04-30 23:59:59", none, mi(2025, 4)},
      // < a month's first instant excludes that month; any later instant keeps it.
      {CompareOp::kLt, "2025-04-01 00:00:00", none, mi(2025, 3)},
      {CompareOp::kLt, "2025-04-01", none, mi(2025, 3)},
      {CompareOp::kLt, "2025-04-01 00:00:00.000", none, mi(2025, 3)},
      {CompareOp::kLt, "2025-04-01 00:00:00.001", none, mi(2025, 4)},
      {CompareOp::kLt, "2025-04-01 00:00:01", none, mi(2025, 4)},
      {CompareOp::kLt, "2025-04-02", none, mi(2025, 4)},
      {CompareOp::kLt, "2025-01-01", none, mi(2024, 12)},  // year boundary
      {CompareOp::kEq, "2025-02-14 08:00:00", mi(2025, 2), mi(2025, 2)},
      {CompareOp::kEq, "2025-02-01", mi(2025, 2), mi(2025, 2)},
  };
  for (const auto& c : cases) {
    MonthRange r = monthRangeForTimeColumn(c.op, dt(c.literal));
    EXPECT_EQ(r.lo, c.lo) << int(c.op) << " " << c.literal;
    EXPECT_EQ(r.hi, c.hi) << int(c.op) << " " << c.literal;
  }
}

TEST(Month, MonthColumnBounds) {
  const auto none = std::nullopt;
  const BoundCase cases[] = {
      {CompareOp::kGe, "2025-01-01", mi(2025, 1), none},
      {CompareOp::kGe, "2025-01-02", mi(2025, 2), none},         // first days after Jan 2: Feb onwards
      {CompareOp::kGe, "2025-01-01 00:00:01", mi(2025, 2), none},  // DATE compared as an instant
      {CompareOp::kGe, "2024-12-31", mi(2025, 1), none},
      {CompareOp::kGt, "2025-01-01", mi(2025, 2), none},
      {CompareOp::kGt, "2025-01-20", mi(2025, 2), none},
      {CompareOp::kGt, "2024-12-31 23:59:59", mi(2025, 1), none},
      {CompareOp::kLe, "2025-03-01", none, mi(2025, 3)},
      {CompareOp::kLe, "2025-03-31", none, mi(2025, 3)},
      {CompareOp::kLe, "2025-02-28 23:59:59", none, mi(2025, 2)},
      {CompareOp::kLt, "2025-04-01", none, mi(2025, 3)},
      {CompareOp::kLt, "2025-04-02", none, mi(2025, 4)},
      {CompareOp::kLt, "2025-04-01 00:00:00.5", none, mi(2025, 4)},
      {CompareOp::kLt, "2025-01-01", none, mi(2024, 12)},
      {CompareOp::kEq, "2025-03-01", mi(2025, 3), mi(2025, 3)},
  };
  for (const auto& c : cases) {
    MonthRange r = monthRangeForMonthColumn(c.op, dt(c.literal));
    EXPECT_EQ(r.lo, c.lo) << int(c.op) << " " << c.literal;
    EXPECT_EQ(r.hi, c.hi) << int(c.op) << " " << c.literal;
  }
  // A month column never holds a day other than the first: equality with one matches nothing.
  EXPECT_TRUE(monthRangeForMonthColumn(CompareOp::kEq, dt("2025-03-15")).isEmpty());
  EXPECT_TRUE(monthRangeForMonthColumn(CompareOp::kEq, dt("2025-03-01 00:00:01")).isEmpty());
}

TEST(Month, SeedsQueryRangeIsThreeMonths) {
  // message_month >= '2025-01-01' AND message_month < '2025-04-01'
  // AND message_time >= '2025-01-01 00:00:00' AND message_time < '2025-04-01 00:00:00'
  MonthRange r = monthRangeForMonthColumn(CompareOp::kGe, dt("2025-01-01"));
  r.intersect(monthRangeForMonthColumn(CompareOp::kLt, dt("2025-04-01")));
  MonthRange t = monthRangeForTimeColumn(CompareOp::kGe, dt("2025-01-01 00:00:00"));
  t.intersect(monthRangeForTimeColumn(CompareOp::kLt, dt("2025-04-01 00:00:00")));
  EXPECT_EQ(r, t);
  EXPECT_EQ(r.span(), 3);
  EXPECT_EQ(monthPredicate("message_month", t), "message_month >= '2025-01-01' AND message_month < '2025-04-01'");
}

TEST(Month, BetweenIsGeAndLe) {
  // message_time BETWEEN '2024-11-10' AND '2025-02-01 00:00:00' covers Nov..Feb.
  MonthRange r = monthRangeForTimeColumn(CompareOp::kGe, dt("2024-11-10"));
  r.intersect(monthRangeForTimeColumn(CompareOp::kLe, dt("2025-02-01 00:00:00")));
  EXPECT_EQ(r, (MonthRange{mi(2024, 11), mi(2025, 2)}));
  EXPECT_EQ(r.span(), 4);
}

TEST(Month, PredicateText) {
  EXPECT_EQ(monthPredicate("message_month", {mi(2025, 2), mi(2025, 2)}),
            "message_month >= '2025-02-01' AND message_month < '2025-03-01'");
  EXPECT_EQ(monthPredicate("m", {mi(2024, 12), mi(2024, 12)}), "m >= '2024-12-01' AND m < '2025-01-01'");
  EXPECT_EQ(monthPredicate("m", {mi(2025, 2), std::nullopt}), "m >= '2025-02-01'");
  EXPECT_EQ(monthPredicate("m", {std::nullopt, mi(2025, 2)}), "m < '2025-03-01'");
  EXPECT_EQ(monthPredicate("m", {std::nullopt, std::nullopt}), "");
  EXPECT_EQ(monthPredicate("m", {mi(2025, 3), mi(2025, 2)}), "");
}

}  // namespace
}  // namespace sp::routing
