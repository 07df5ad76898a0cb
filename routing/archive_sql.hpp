// The statements of one archive batch (storage design, "归档与冷热分层"):
// rows older than a cutoff move from a hot table to its archive table in
// primary-key order, a batch at a time, by primary-key range:
//
//   SELECT <pk> FROM hot WHERE <after cursor> AND <time> < cutoff ORDER BY <pk> LIMIT n   -- the batch's keys
//   START TRANSACTION
//   INSERT INTO archive SELECT * FROM hot WHERE <cursor < pk <= last key> AND <time> < cutoff ORDER BY <pk> LIMIT n
//   DELETE FROM hot WHERE <same> ORDER BY <pk> LIMIT n
//   COMMIT when both affected-row counts are equal, else ROLLBACK and retry
//
// Pure text building; the proxy runs the statements (proxy/lifecycle/msg_archiver.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "routing/map/month.hpp"

namespace sp::routing {

// A primary-key value: one decimal integer per key column (the archive
// requires integer key columns, so values go into SQL unquoted and compare
// exactly; a quoted BIGINT would be compared as a double).
using KeyTuple = std::vector<std::string>;

// True when `text` is a decimal integer (optional '-', 1..20 digits).
bool isIntegerText(std::string_view text);

// `(a > 1 OR (a = 1 AND b > 2))` for columns (a, b) after (1, 2): strictly after.
// Empty text for an empty tuple (no bound).
std::string keyAfter(const std::vector<std::string>& columns, const KeyTuple& key);
// `(a < 1 OR (a = 1 AND b <= 2))`: up to and including `key`.
std::string keyUpTo(const std::vector<std::string>& columns, const KeyTuple& key);

struct ArchiveBatchSql {
  std::string select_keys;  // the batch's keys, in key order
  std::string insert;       // INSERT INTO archive SELECT * ...
  std::string remove;       // DELETE FROM hot ...
};

// The shard key and the order column within it (msg: conv_id, seq) when the
// primary key is exactly those two: then a batch moves only each key's
// oldest rows, those below its first row not older than the cutoff,
//
//   AND seq < IFNULL((SELECT y.seq FROM hot AS y WHERE y.conv_id = hot.conv_id
//                     AND y.created_at >= cutoff ORDER BY y.seq LIMIT 1), 18446744073709551615)
//
// so that archived seqs stay below every hot one (what hot-then-cold reads
// rely on, routing/archive_read.hpp) even when two messages of a
// conversation were stored in the other order around the cutoff. The server
// caches the subquery per conversation (subquery_cache) and stops at the
// first younger row; the DELETE then removes the rows of its range that the
// INSERT copied: `AND (conv_id, seq) IN (SELECT conv_id, seq FROM archive)`.
struct KeyOrder {
  std::string key_column;
  std::string seq_column;
};

// `cursor` empty: from the table's first row. `last` is the batch's last key
// (from select_keys; empty when building select_keys only).
ArchiveBatchSql archiveBatchSql(std::string_view hot, std::string_view archive, const std::vector<std::string>& columns,
                                std::string_view time_column, std::string_view cutoff, const KeyTuple& cursor,
                                const KeyTuple& last, uint32_t batch_rows, const std::optional<KeyOrder>& order = {});

// Days since 1970-01-01 of a civil date, and back (proleptic Gregorian).
int64_t daysFromCivil(const CivilDate& d);
CivilDate civilFromDays(int64_t days);
// 'YYYY-MM-DD 00:00:00' of the day `days` before `today`.
std::string cutoffDaysBefore(const CivilDate& today, uint32_t days);

}  // namespace sp::routing
