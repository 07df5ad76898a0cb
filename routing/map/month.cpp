#include "routing/map/month.hpp"

#include <algorithm>

namespace sp::routing {
namespace {

// Reads exactly `width` decimal digits at text[pos].
std::optional<int> readDigits(std::string_view text, size_t pos, size_t width) {
  if (pos + width > text.size()) return std::nullopt;
  int value = 0;
  for (size_t i = pos; i < pos + width; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

std::string twoDigits(int v) { return std::string(1, char('0' + v / 10)) + char('0' + v % 10); }

std::string fourDigits(int v) { return twoDigits(v / 100) + twoDigits(v % 100); }

// Parses " HH:MM:SS[.ffffff]" (the separator already checked) into v.
bool parseTimeOfDay(std::string_view text, DateTimeValue& v) {
  auto h = readDigits(text, 0, 2), m = readDigits(text, 3, 2), s = readDigits(text, 6, 2);
  if (!h || !m || !s || text.size() < 8 || text[2] != ':' || text[5] != ':') return false;
  if (*h > 23 || *m > 59 || *s > 59) return false;
  v.hour = *h;
  v.minute = *m;
  v.second = *s;
  std::string_view frac = text.substr(8);
  if (frac.empty()) return true;
  if (frac[0] != '.' || frac.size() < 2 || frac.size() > 7) return false;
  uint32_t micros = 0;
  for (size_t i = 1; i < 7; ++i) {
    int digit = 0;
    if (i < frac.size()) {
      if (frac[i] < '0' || frac[i] > '9') return false;
      digit = frac[i] - '0';
    }
    micros = micros * 10 + digit;
  }
  v.microsecond = micros;
  return true;
}

}  // namespace

bool isLeapYear(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int daysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month == 2 && isLeapYear(year)) return 29;
  return kDays[month - 1];
}

std::optional<DateTimeValue> parseDateTime(std::string_view text) {
  auto y = readDigits(text, 0, 4), mo = readDigits(text, 5, 2), d = readDigits(text, 8, 2);
  if (!y || !mo || !d || text[4] != '-' || text[7] != '-') return std::nullopt;
  if (*mo < 1 || *mo > 12 || *d < 1 || *d > daysInMonth(*y, *mo)) return std::nullopt;
  DateTimeValue v;
  v.date = {*y, *mo, *d};
  if (text.size() == 10) return v;
  if (text[10] != ' ' && text[10] != 'T') return std::nullopt;
  if (!parseTimeOfDay(text.substr(11), v)) return std::nullopt;
  v.has_time = true;
  return v;
}

CivilDate firstDayOf(MonthIndex m) { return {yearOf(m), monthOf(m), 1}; }

std::string formatMonthStart(MonthIndex m) {
  return fourDigits(yearOf(m)) + "-" + twoDigits(monthOf(m)) + "-01";
}

std::string partitionName(MonthIndex m) { return "p" + fourDigits(yearOf(m)) + twoDigits(monthOf(m)); }

bool isMonthStart(const DateTimeValue& v) {
  return v.date.day == 1 && v.hour == 0 && v.minute == 0 && v.second == 0 && v.microsecond == 0;
}

CompareOp flip(CompareOp op) {
  switch (op) {
    case CompareOp::kLt: return CompareOp::kGt;
    case CompareOp::kLe: return CompareOp::kGe;
    case CompareOp::kGt: return CompareOp::kLt;
    case CompareOp::kGe: return CompareOp::kLe;
    case CompareOp::kEq: return CompareOp::kEq;
  }
  return op;
}

std::optional<int64_t> MonthRange::span() const {
  if (!isBounded()) return std::nullopt;
  return isEmpty() ? 0 : *hi - *lo + 1;
}

void MonthRange::intersect(const MonthRange& other) {
  if (other.lo) lo = lo ? std::max(*lo, *other.lo) : *other.lo;
  if (other.hi) hi = hi ? std::min(*hi, *other.hi) : *other.hi;
}

MonthRange monthRangeForMonthColumn(CompareOp op, const DateTimeValue& v) {
  // Month m's column value is first(m); first(month(v)) <= v, with equality
  // exactly when v is a month start.
  MonthIndex m = monthIndexOf(v.date);
  bool start = isMonthStart(v);
  switch (op) {
    case CompareOp::kEq: return start ? MonthRange{m, m} : MonthRange{m + 1, m};
    case CompareOp::kGe: return {start ? m : m + 1, std::nullopt};
    case CompareOp::kGt: return {m + 1, std::nullopt};
    case CompareOp::kLe: return {std::nullopt, m};
    case CompareOp::kLt: return {std::nullopt, start ? m - 1 : m};
  }
  return {};
}

MonthRange monthRangeForTimeColumn(CompareOp op, const DateTimeValue& v) {
  // A row with time t lies in month(t); month(t) is monotonic in t.
  MonthIndex m = monthIndexOf(v.date);
  switch (op) {
    case CompareOp::kEq: return {m, m};
    case CompareOp::kGe:
    case CompareOp::kGt: return {m, std::nullopt};
    case CompareOp::kLe: return {std::nullopt, m};
    case CompareOp::kLt: return {std::nullopt, isMonthStart(v) ? m - 1 : m};
  }
  return {};
}

std::string monthPredicate(std::string_view column, const MonthRange& range) {
  std::string col(column);
  if (range.isEmpty() || (!range.lo && !range.hi)) return "";
  std::string out;
  if (range.lo) out = col + " >= '" + formatMonthStart(*range.lo) + "'";
  if (range.hi) {
    if (!out.empty()) out += " AND ";
    out += col + " < '" + formatMonthStart(*range.hi + 1) + "'";
  }
  return out;
}

}  // namespace sp::routing
