#include "routing/archive_sql.hpp"

namespace sp::routing {

namespace {

std::string quoteName(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    out += c;
    if (c == '`') out += '`';
  }
  return out + "`";
}

std::string keyList(const std::vector<std::string>& columns) {
  std::string out;
  for (const auto& c : columns) out += (out.empty() ? "" : ", ") + quoteName(c);
  return out;
}

// Lexicographic comparison of the key columns with `key`: `op_last` on the
// last column decides strict or not ("a > 1 OR (a = 1 AND b > 2)").
std::string tupleCompare(const std::vector<std::string>& columns, const KeyTuple& key, std::string_view op,
                         std::string_view op_last) {
  std::string out;
  for (size_t i = 0; i < columns.size() && i < key.size(); ++i) {
    std::string term;
    for (size_t j = 0; j < i; ++j) term += quoteName(columns[j]) + " = " + key[j] + " AND ";
    term += quoteName(columns[i]) + " " + std::string(i + 1 == columns.size() ? op_last : op) + " " + key[i];
    out += (out.empty() ? "" : " OR ") + (i == 0 ? term : "(" + term + ")");
  }
  return out.empty() ? out : "(" + out + ")";
}

std::string pad(int64_t v, size_t width) {
  std::string s = std::to_string(v);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

}  // namespace

bool isIntegerText(std::string_view text) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  if (text.empty() || text.size() > 20) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string keyAfter(const std::vector<std::string>& columns, const KeyTuple& key) {
  return tupleCompare(columns, key, ">", ">");
}

std::string keyUpTo(const std::vector<std::string>& columns, const KeyTuple& key) {
  return tupleCompare(columns, key, "<", "<=");
}

ArchiveBatchSql archiveBatchSql(std::string_view hot, std::string_view archive, const std::vector<std::string>& columns,
                                std::string_view time_column, std::string_view cutoff, const KeyTuple& cursor,
                                const KeyTuple& last, uint32_t batch_rows, const std::optional<KeyOrder>& order) {
  std::string old_rows = quoteName(time_column) + " < '" + std::string(cutoff) + "'";
  if (!cursor.empty()) old_rows = keyAfter(columns, cursor) + " AND " + old_rows;
  std::string where = old_rows;
  if (order) {
    const std::string seq = quoteName(order->seq_column), key = quoteName(order->key_column);
    where += " AND " + seq + " < IFNULL((SELECT y." + seq + " FROM " + quoteName(hot) + " AS y WHERE y." + key + " = " +
             quoteName(hot) + "." + key + " AND y." + quoteName(time_column) + " >= '" + std::string(cutoff) +
             "' ORDER BY y." + seq + " LIMIT 1), 18446744073709551615)";
  }
  std::string by_key = " ORDER BY " + keyList(columns) + " LIMIT " + std::to_string(batch_rows);
  ArchiveBatchSql out;
  out.select_keys = "SELECT " + keyList(columns) + " FROM " + quoteName(hot) + " WHERE " + where + by_key;
  if (last.empty()) return out;
  std::string up_to = keyUpTo(columns, last) + " AND ";
  out.insert = "INSERT INTO " + quoteName(archive) + " SELECT * FROM " + quoteName(hot) + " WHERE " + up_to + where +
               by_key;
  // A single-table DELETE does not cache the prefix subquery (it would run
  // once per row): delete what the INSERT just copied instead, one primary-key
  // probe of the archive per row.
  std::string copied = order ? " AND (" + keyList(columns) + ") IN (SELECT " + keyList(columns) + " FROM " +
                                   quoteName(archive) + ")"
                             : std::string();
  out.remove = "DELETE FROM " + quoteName(hot) + " WHERE " + up_to + old_rows + copied + by_key;
  return out;
}

// Howard Hinnant's days_from_civil / civil_from_days.
int64_t daysFromCivil(const CivilDate& d) {
  int64_t y = d.year - (d.month <= 2 ? 1 : 0);
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t mp = (d.month + 9) % 12;
  int64_t doy = (153 * mp + 2) / 5 + d.day - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

CivilDate civilFromDays(int64_t z) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {static_cast<int>(y + (m <= 2 ? 1 : 0)), m, d};
}

std::string cutoffDaysBefore(const CivilDate& today, uint32_t days) {
  CivilDate c = civilFromDays(daysFromCivil(today) - days);
  return pad(c.year, 4) + "-" + pad(c.month, 2) + "-" + pad(c.day, 2) + " 00:00:00";
}

}  // namespace sp::routing
