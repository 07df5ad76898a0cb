// The marks a move's cut-over leaves in the binary logs for the change
// stream (docs/changes.md, "Through a move"). With the moving keys' writes
// held, the source gets a mark (any statement that takes a GTID of its own)
// and, once the new map is in force, the target gets one naming the
// source's backend and that GTID. A stream reading the target waits at the
// target's mark until it has passed the source's GTID, so every change the
// source committed before the cut-over comes before any the target commits
// after it. The marks are DROP TABLE IF EXISTS of tables that never exist:
// logged as DDL with a GTID, replicated, changing nothing. Pure.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace sp::proxy {

inline constexpr std::string_view kCutoverMarkPrefix = "__sp_cut_";

// Run first on every maintenance session (a move's copy, catch-up and
// cleanup; archiving): its row events carry MariaDB's
// LOG_EVENT_SKIP_REPLICATION_F, which the change stream drops (replicas still
// apply them: replicate_events_marked_for_skip defaults to REPLICATE). Needs
// no privilege on MariaDB 10.11.
inline constexpr std::string_view kMaintenanceSessionSql = "SET SESSION skip_replication = 1";

std::string cutoverSourceMarkSql();
// `source_gtid`: the source mark's GTID (@@last_gtid after it).
std::string cutoverTargetMarkSql(std::string_view source_backend, std::string_view source_gtid);

struct CutoverMark {
  std::string source_backend;
  std::string source_gtid;  // "d-s-n"
};
// The target mark in a QUERY event's text; nullopt for anything else
// (the source mark included: nothing waits at it).
std::optional<CutoverMark> parseCutoverMark(std::string_view query);

}  // namespace sp::proxy
