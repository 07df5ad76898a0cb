// Online moves in the proxy's SQLite file (config `cache:`, table `moves`
// beside the applied shard maps): every move's request, state and figures,
// saved at every step so a move survives a proxy restart (SHOW MOVES lists
// them; the coordinator resumes the unfinished ones at start-up).
//
// Used from the move thread only (its own SQLite connection).
#pragma once
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "routing/map/move_plan.hpp"

struct sqlite3;

namespace sp::proxy {

// The states of a move, in order (docs/admin.md, "Online moves").
enum class MoveState : uint8_t {
  kCopying,      // snapshot copy in progress
  kCatchingUp,   // applying the source's binlog to the target
  kVerifying,    // chunked checksums before the switch
  kCuttingOver,  // writes held, catch-up to the end, map switch
  kSwitched,     // the new map is in force; verifying again
  kVerified,     // switched and verified: CLEANUP MOVE may delete the source rows
  kVerifyFailed, // switched, but the verify after it found differences (move back)
  kCleaningUp,   // CLEANUP MOVE deleting the source rows
  kCleanedUp,
  kFailed,       // stopped before the switch: routing stayed on the source
  kCancelled,    // CANCEL MOVE before the switch: routing stayed on the source
};

std::string_view toString(MoveState state);
std::optional<MoveState> moveStateFrom(std::string_view text);

// The target's copied rows of a move stopped before the switch (failed or
// cancelled): deleted at once when the target answers, else remembered and
// retried once it is back (target_cleanup.hpp).
enum class TargetCleanup : uint8_t {
  kNone,       // nothing to delete (or deleted when the move stopped)
  kPending,    // the delete failed (the target was down): retried
  kDone,       // deleted by a retry or CLEANUP MOVE (target_cleanup_at)
  kAbandoned,  // not retried any more: the map changed, or CANCEL MOVE (message says why)
};
std::string_view toString(TargetCleanup cleanup);
std::optional<TargetCleanup> targetCleanupFrom(std::string_view text);
// The move is finished (no step left to run; CLEANUP MOVE may still apply to kVerified).
bool moveFinished(MoveState state);
// The map still routes the keys to the source.
bool beforeSwitch(MoveState state);

struct MoveRecord {
  int64_t id = 0;
  routing::MoveRequest request;
  std::string what;              // describeMove(request)
  std::string source;            // "db0.tg_channel_message_s01"
  std::string target;            // "db1.tg_channel_message_s03"
  MoveState state = MoveState::kCopying;
  uint64_t rows_copied = 0;
  double copy_seconds = 0;
  std::string snapshot_position; // binlog position of the copy's snapshot ("file:pos")
  std::string applied_position;  // catch-up's applied position
  uint64_t rows_applied = 0;     // row changes the catch-up wrote
  double lag_seconds = 0;        // catch-up lag at the last measure
  uint64_t lag_bytes = 0;
  std::string verify;            // result of the last verify ("ok: 12 chunks, 3400 rows", "differ: ...")
  double pause_ms = 0;           // writes held at the cut-over
  uint32_t cutover_attempts = 0;
  uint64_t old_version = 0;      // map versions around the switch (0: not switched)
  uint64_t new_version = 0;
  uint64_t rows_deleted = 0;     // CLEANUP MOVE
  TargetCleanup target_cleanup = TargetCleanup::kNone;
  std::string target_cleanup_at; // UTC, when a pending target cleanup was done
  std::string message;           // the last error or note
  std::string created_by;
  std::string created_at, updated_at;  // UTC
};

class MoveStore {
 public:
  static std::expected<std::unique_ptr<MoveStore>, std::string> open(const std::string& path);
  ~MoveStore();
  MoveStore(const MoveStore&) = delete;
  MoveStore& operator=(const MoveStore&) = delete;

  // Inserts (id 0: assigns id and created_at) or updates by id; sets updated_at.
  std::expected<void, std::string> save(MoveRecord& record);
  // Newest first.
  std::expected<std::vector<MoveRecord>, std::string> list();
  // Those whose target_cleanup is stored as `cleanup`, newest first (the
  // cleanup sweep's query every 250 ms: not a scan of every move ever run).
  std::expected<std::vector<MoveRecord>, std::string> listWithTargetCleanup(TargetCleanup cleanup);
  std::expected<std::optional<MoveRecord>, std::string> find(int64_t id);

 private:
  explicit MoveStore(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

}  // namespace sp::proxy
