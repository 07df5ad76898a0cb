// Statement metrics (docs/observability.md). Each worker thread owns one
// WorkerMetrics and writes it without locks or atomics; the metrics endpoint
// copies every worker's counters on that worker's own thread (a posted task,
// like SHOW BACKENDS) and adds them up at scrape time.
//
// A client session fills one StatementRecord per command (the plan, the
// error, the rows, the shards of a scatter) and hands it to its worker's
// StatementObserver once the answer is sent: the one call on the hot path.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "proxy/observe/digest_table.hpp"
#include "routing/plan.hpp"

namespace sp::proxy {

// The plan kinds statements are counted by (label `plan`).
enum class PlanLabel : uint8_t {
  kRoute,        // one shard (or the backend of a named physical table)
  kInPruned,     // a scatter over the shards of the key values of an IN list / OR
  kScatter,      // a scatter over every shard (no key)
  kSplitWrite,   // a multi-row INSERT split per shard
  kPassthrough,  // no sharded table: the default (or pinned) backend
  kRefused,      // refused by the planner (91xx)
  kAdmin,        // a command of the admin port
  kLocal,        // answered by the proxy itself (BEGIN, KILL, EXPLAIN SHARDS, COM_PING, ...)
};
inline constexpr size_t kPlanLabelCount = 8;
std::string_view planLabelName(PlanLabel label);
PlanLabel planLabelOf(const routing::Plan& plan);

// A Prometheus histogram with fixed upper bounds (base units). counts[i] is
// the number of observations in (bounds[i-1], bounds[i]]; the last slot
// holds those above every bound (+Inf). Cumulated when rendered.
class Histogram {
 public:
  explicit Histogram(std::span<const double> bounds = {}) : bounds_(bounds), counts_(bounds.size() + 1, 0) {}
  void observe(double value);
  void add(const Histogram& other);  // same bounds
  std::span<const double> bounds() const { return bounds_; }
  const std::vector<uint64_t>& counts() const { return counts_; }
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::span<const double> bounds_;
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  double sum_ = 0;
};

// Bucket bounds used by the series (seconds, or a count of shards).
extern const std::array<double, 16> kLatencyBounds;
extern const std::array<double, 12> kPoolWaitBounds;
extern const std::array<double, 8> kFanoutBounds;
extern const std::array<double, 10> kMergeBufferBounds;

// What one statement did, filled by the session while it runs.
struct StatementRecord {
  using Shard = ShardTiming;
  std::chrono::steady_clock::time_point started{};
  bool active = false;           // a command that is a statement (not COM_QUIT / COM_STMT_CLOSE)
  PlanLabel plan = PlanLabel::kLocal;
  // Strings assigned in place: their capacity is kept from one statement to
  // the next, so recording allocates nothing once warm.
  std::string table;             // logical table routed; empty when none
  std::vector<std::string> backends;  // backends the statement ran on
  std::vector<std::string> shard_names;  // shards of `table` it ran on (plan order)
  uint32_t fanout = 0;           // shards a scatter / split write queried
  std::string_view sql;          // the statement as the client sent it (valid until the next command)
  std::string normalized;        // from the plan cache, when it planned the statement
  uint16_t error_code = 0;       // the ERR sent to the client (0: none)
  uint64_t rows = 0;             // rows sent to the client
  std::vector<Shard> shards;     // a scatter: each shard's time and rows
  uint64_t merge_bytes = 0;      // a scatter: bytes of the merged rows sent to the client
  uint64_t merge_peak_bytes = 0; // a scatter: most bytes its merge held at once (scatter.max_merge_bytes)

  void begin(std::chrono::steady_clock::time_point now);
  void onPlan(const routing::Plan& plan, std::string_view default_backend);
  void onError(uint16_t code) { if (error_code == 0) error_code = code; }
  void onResponse(uint64_t forwarded_rows, uint16_t code) {
    rows += forwarded_rows;
    if (code != 0) onError(code);
  }
  void onMergedRow(size_t bytes) {
    ++rows;
    merge_bytes += bytes;
  }
};

// Counters of one worker thread.
struct WorkerMetrics {
  struct ShardCounters {
    uint64_t statements = 0;
    uint64_t errors = 0;
    uint64_t rows = 0;  // result rows the shard returned
  };
  // Heterogeneous lookup: a shard name as string_view finds its entry without a copy.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using ShardMap = std::unordered_map<std::string, ShardCounters, NameHash, std::equal_to<>>;
  struct TableCounters {
    std::string table;  // "" when the statement named no sharded table
    std::array<std::array<uint64_t, 2>, kPlanLabelCount> statements{};  // [plan][0 ok, 1 error]
    ShardMap shards;    // by shard name (bounded by the shard map)
  };
  struct BackendCounters {
    std::string backend;
    uint64_t statements = 0;
    uint64_t errors = 0;
    uint64_t rows = 0;  // result rows it returned (a scatter's shards each count their own)
    // The statements' latency (client's view): what background work yields to.
    Histogram latency{kLatencyBounds};
  };
  std::vector<TableCounters> tables;
  std::vector<BackendCounters> backends;
  std::array<Histogram, kPlanLabelCount> latency = makeLatency();
  std::map<uint16_t, uint64_t> errors;    // every ERR sent to a client, by code
  std::map<uint16_t, uint64_t> refusals;  // planner refusals, by code
  Histogram fanout{kFanoutBounds};
  uint64_t merge_rows = 0;                // rows a scatter sent to clients
  uint64_t merge_bytes = 0;               // bytes of those rows
  Histogram merge_buffer{kMergeBufferBounds};  // per scatter: most bytes its merge held at once
  uint64_t kills = 0;                     // KILL / COM_PROCESS_KILL carried out
  uint64_t shard_timeouts = 0;            // shards past scatter.shard_timeout_ms
  uint64_t slow_queries = 0;

  void record(const StatementRecord& r, double seconds);
  void add(const WorkerMetrics& other);   // by name: sums another worker's counters
  // Admin-port commands (counted by the admin thread), as statements with plan "admin".
  void addAdminCommands(uint64_t ok, uint64_t errors);

 private:
  static std::array<Histogram, kPlanLabelCount> makeLatency();
  TableCounters& table(std::string_view name);
  BackendCounters& backend(std::string_view name);
  static ShardCounters& shard(TableCounters& t, std::string_view name);
};

}  // namespace sp::proxy
