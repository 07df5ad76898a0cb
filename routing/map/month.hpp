// Month arithmetic for month-partitioned tables (tg_channel_message): the
// month column holds the first day of the month of the time column, so any
// bound on either column becomes a range of month indexes, and that range is
// what the planner checks (both ends present, span <= max_span_months) and
// writes back as a month-column predicate so MySQL prunes partitions.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sp::routing {

// Proleptic Gregorian calendar date.
struct CivilDate {
  int year = 0;   // 0..9999
  int month = 0;  // 1..12
  int day = 0;    // 1..days in month
  friend bool operator==(const CivilDate&, const CivilDate&) = default;
};

// A DATE or DATETIME literal: a date plus an optional time of day.
struct DateTimeValue {
  CivilDate date;
  int hour = 0, minute = 0, second = 0;
  uint32_t microsecond = 0;
  bool has_time = false;  // false for 'YYYY-MM-DD'
  friend bool operator==(const DateTimeValue&, const DateTimeValue&) = default;
};

// Accepts exactly 'YYYY-MM-DD', 'YYYY-MM-DD HH:MM:SS' (or 'T' between) and
// either with '.f' .. '.ffffff'; the text is the literal's content without
// quotes. Anything else (MySQL's looser forms, invalid dates such as
// 2024-02-30, zero dates) is nullopt: the planner refuses rather than guess.
std::optional<DateTimeValue> parseDateTime(std::string_view text);

bool isLeapYear(int year);
int daysInMonth(int year, int month);

// Months counted from year 0: year * 12 + (month - 1). Adjacent months differ by 1.
using MonthIndex = int64_t;
inline MonthIndex monthIndexOf(const CivilDate& d) { return int64_t(d.year) * 12 + (d.month - 1); }
inline int yearOf(MonthIndex m) { return static_cast<int>(m / 12); }
inline int monthOf(MonthIndex m) { return static_cast<int>(m % 12) + 1; }
CivilDate firstDayOf(MonthIndex m);
// "2024-03-01": the month column's value for that month.
std::string formatMonthStart(MonthIndex m);
// "p202403": the partition holding that month (schema tool naming).
std::string partitionName(MonthIndex m);
// True when v is the first instant of its month (day 1, 00:00:00.000000).
bool isMonthStart(const DateTimeValue& v);

enum class CompareOp : uint8_t { kEq, kLt, kLe, kGt, kGe };
// `literal op column` is `column flip(op) literal`.
CompareOp flip(CompareOp op);

// An inclusive range of months; a missing end is unbounded. lo > hi is empty.
struct MonthRange {
  std::optional<MonthIndex> lo;
  std::optional<MonthIndex> hi;

  bool isEmpty() const { return lo && hi && *lo > *hi; }
  bool isBounded() const { return lo && hi; }
  // Months covered, inclusive (Jan..Mar = 3); nullopt when unbounded; 0 when empty.
  std::optional<int64_t> span() const;
  // Keeps months in both ranges.
  void intersect(const MonthRange& other);
  friend bool operator==(const MonthRange&, const MonthRange&) = default;
};

// The months m for which `month_column op v` can hold, where month_column is
// always the first day of a month (compared as an instant, as MySQL compares
// a DATE with a DATETIME).
MonthRange monthRangeForMonthColumn(CompareOp op, const DateTimeValue& v);
// The months of rows for which `time_column op v` can hold.
// Exact except `> v`, which keeps v's month even if no instant of it is later
// than v (v = the month's last microsecond): a superset is never wrong, as the
// original time predicate still filters.
MonthRange monthRangeForTimeColumn(CompareOp op, const DateTimeValue& v);
// `col >= '<first month>' AND col < '<month after the last>'` (the seeds'
// half-open form; one side when the other is unbounded). Half-open keeps a
// stray non-first-day value inside its month. Empty text for an empty range
// or one unbounded on both sides.
std::string monthPredicate(std::string_view column, const MonthRange& range);

}  // namespace sp::routing
