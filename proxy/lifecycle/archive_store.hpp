// Progress of archive runs (ARCHIVE ..., SHOW ARCHIVES), one row per shard of
// a run, in the proxy's SQLite file (config `cache:`, table archive_progress
// beside the applied shard maps). A run that stopped (error, restart) is
// resumed by the same command: the row with the same table, shard and cutoff
// that is not `done` keeps its cursor (the last key moved).
//
// Used from the admin thread only.
#pragma once
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace sp::proxy {

struct ArchiveProgress {
  int64_t id = 0;
  std::string kind;       // "move" (hot -> archive table) or "drop" (month export + DROP PARTITION)
  std::string table;      // logical
  std::string shard;
  std::string source;     // physical hot table
  std::string target;     // archive table, or the export file
  std::string cutoff;     // rows older than this ('YYYY-MM-DD HH:MM:SS'), or the month ('2024-11')
  std::string cursor;     // last key moved, "7,100" ("" = none yet)
  uint64_t rows = 0;      // rows moved / exported
  uint64_t batches = 0;
  uint64_t retries = 0;   // batches rolled back because the two counts differed
  double seconds = 0;     // time spent moving (pauses excluded)
  std::string state;      // running, done, failed
  std::string message;    // error, checksum, ...
  std::string started_at, updated_at;  // UTC
};

class ArchiveStore {
 public:
  static std::expected<std::unique_ptr<ArchiveStore>, std::string> open(const std::string& path);
  ~ArchiveStore();
  ArchiveStore(const ArchiveStore&) = delete;
  ArchiveStore& operator=(const ArchiveStore&) = delete;

  // The unfinished row of (kind, table, shard, cutoff), if any.
  std::expected<std::optional<ArchiveProgress>, std::string> unfinished(const std::string& kind,
                                                                        const std::string& table,
                                                                        const std::string& shard,
                                                                        const std::string& cutoff);
  // Inserts (id 0: assigns id and started_at) or updates by id; sets updated_at.
  std::expected<void, std::string> save(ArchiveProgress& progress);
  // Newest first; at most `limit` rows (0 = all).
  std::expected<std::vector<ArchiveProgress>, std::string> list(size_t limit = 0);

 private:
  explicit ArchiveStore(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

}  // namespace sp::proxy
