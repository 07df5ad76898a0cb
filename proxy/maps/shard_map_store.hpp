// The SQLite cache of applied shard maps (config key `cache:`): every map the
// proxy put in force, with its version, checksum, YAML source, when and by
// whom. It lets the proxy start when the map file is missing or broken, and
// lets an operator roll back to any earlier map (docs/operations.md).
//
// Not thread-safe: ShardMapManager serializes all use under its mutex.
#pragma once
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace sp::proxy {

struct CachedShardMap {
  int64_t id = 0;            // row id: increases with every application
  uint64_t version = 0;
  std::string checksum;
  std::string source_text;
  std::string applied_at;    // UTC, "2026-11-30T10:21:07Z"
  std::string applied_by;    // "startup", "admin:<user>", "sighup"
  std::string note;          // "reload", "rollback", "startup from cache", ...
};

class ShardMapStore {
 public:
  // What open() found, for the log.
  struct OpenReport {
    bool created = false;           // the file did not exist (or was empty) and was initialised
    std::string set_aside_path;     // a corrupt file was renamed to this path
    std::string problem;            // why it was set aside
  };

  // Opens (creating the parent directory and the schema when needed). A file
  // that is not a SQLite database or has another schema is renamed to
  // "<path>.corrupt-<UTC timestamp>" and a fresh cache is created in its place.
  // An error is returned only when no usable cache can be had at all.
  static std::expected<std::unique_ptr<ShardMapStore>, std::string> open(const std::string& path,
                                                                          OpenReport* report = nullptr);
  ~ShardMapStore();
  ShardMapStore(const ShardMapStore&) = delete;
  ShardMapStore& operator=(const ShardMapStore&) = delete;

  // Appends a row; id and applied_at are assigned here (applied_at when empty).
  std::expected<CachedShardMap, std::string> save(CachedShardMap map);
  // Newest first (by id); at most `limit` rows (0 = all).
  std::expected<std::vector<CachedShardMap>, std::string> list(size_t limit = 0) const;
  // The most recently applied map.
  std::expected<std::optional<CachedShardMap>, std::string> newest() const;
  // The most recent row with this version.
  std::expected<std::optional<CachedShardMap>, std::string> findVersion(uint64_t version) const;

  const std::string& path() const { return path_; }

 private:
  ShardMapStore(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  std::expected<std::vector<CachedShardMap>, std::string> query(const std::string& where_order,
                                                               int64_t bind_value, bool bind) const;

  std::string path_;
  sqlite3* db_ = nullptr;
};

// "2026-11-30T10:21:07Z" for now.
std::string utcNowText();

}  // namespace sp::proxy
