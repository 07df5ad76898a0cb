// The global transactions of this process (docs/routing.md, "Transactions
// across backends"): their ids, which are open and in which phase (SHOW
// TRANSACTIONS), the in-doubt branches the last recovery pass could not
// resolve, and the counters of docs/observability.md. A global id is
// <xid_prefix>-<boot>-<n> (alone) or <xid_prefix>-<member>-<boot>-<n> (in a
// fleet: the member name tells recovery whose branch it is): the prefix
// tells recovery which prepared branches are the proxy's (or its fleet's);
// <boot> (the start time in ms, base 36) keeps the ids of two runs apart. An id stays registered from XA START until every branch
// has its outcome: recovery never resolves a registered id (the live
// commit owns it), so one global transaction never gets two outcomes.
// Thread-safe (one mutex; the counters are atomics).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "proxy/net/net.hpp"

namespace sp::proxy {

class XaDecisionLog;
class XaFleetStore;

enum class XaPhase : uint8_t { kActive, kPreparing, kCommitting, kRollingBack };
std::string_view xaPhaseName(XaPhase phase);

struct XaCounters {
  std::atomic<uint64_t> committed_one_phase{0};  // one branch: XA COMMIT ... ONE PHASE
  std::atomic<uint64_t> committed_two_phase{0};
  std::atomic<uint64_t> rolled_back{0};          // ROLLBACK, an aborted statement, a lost branch
  std::atomic<uint64_t> commit_failed{0};        // COMMIT that ended rolled back
  std::atomic<uint64_t> participants{0};         // branches of two-phase commits, summed
  std::atomic<uint64_t> prepare_us{0};           // summed over two-phase commits
  std::atomic<uint64_t> commit_us{0};            // decision + XA COMMITs, summed over two-phase commits
  std::atomic<uint64_t> recovery_passes{0};
  std::atomic<uint64_t> recovered_commits{0};    // branches committed by recovery
  std::atomic<uint64_t> recovered_rollbacks{0};  // branches rolled back by recovery
  std::atomic<uint64_t> recovery_errors{0};      // backends recovery could not read or resolve
  std::atomic<uint64_t> recovered_for_others{0};  // of recovered_*: branches of another (dead) fleet member
  std::atomic<uint64_t> decisions_unknown{0};    // commits whose decision write etcd did not confirm
};

class XaRegistry {
 public:
  struct Open {
    std::string gtrid;
    uint32_t session = 0;
    XaPhase phase = XaPhase::kActive;
    uint32_t branches = 1;
    std::chrono::steady_clock::time_point since;
  };
  struct InDoubt {
    std::string gtrid;
    std::string backend;
    std::string bqual;
    bool decided = false;  // a commit decision exists
    std::chrono::steady_clock::time_point first_seen;
    std::string note;      // why it waits ("waiting for proxy p1 (alive)", "waiting for etcd: ...")
  };
  // A branch recovery finished (SHOW TRANSACTIONS keeps the last kRecentRecoveries).
  struct Recovered {
    std::string gtrid;
    std::string backend;
    bool committed = false;
    std::string note;  // "own" or "for proxy <name> (gone)"
    std::chrono::steady_clock::time_point at;
  };
  static constexpr size_t kRecentRecoveries = 32;

  // Before the first id; `boot_unix_ms` tells this run's ids from others';
  // `member`: the fleet member name (empty: alone).
  void configure(std::string prefix, int64_t boot_unix_ms, std::string member = {});
  const std::string& prefix() const { return prefix_; }
  // A new id, registered as kActive for `session`.
  std::string start(uint32_t session);
  void setPhase(const std::string& gtrid, XaPhase phase);
  void setBranches(const std::string& gtrid, uint32_t branches);
  void finish(const std::string& gtrid);
  bool live(const std::string& gtrid) const;
  std::vector<Open> open() const;

  // Recovery's report: what it left prepared after its last pass (kept
  // first-seen times for branches already listed).
  void setInDoubt(std::vector<InDoubt> rows);
  std::vector<InDoubt> inDoubt() const;
  void addRecovered(Recovered row);
  std::vector<Recovered> recovered() const;

  XaCounters counters;
  std::shared_ptr<XaDecisionLog> log;  // set at start-up when transactions.cross_backend is atomic
  // In a fleet: where decisions go instead of `log` (which then only serves
  // ids without a member name, left by a run of this proxy alone).
  std::shared_ptr<XaFleetStore> fleet;
  // Where decisions are written (set at start-up with `log`): an fsync or
  // etcd's answer takes milliseconds, which on a worker thread would stall
  // every session of that worker. Unset (tests): the caller's thread.
  std::optional<asio::any_io_executor> decision_writer;

 private:
  mutable std::mutex mu_;
  std::string prefix_ = "sp";
  std::string boot_ = "0";
  std::string member_;
  uint64_t next_ = 0;
  std::map<std::string, Open> open_;
  std::vector<InDoubt> in_doubt_;
  std::vector<Recovered> recovered_;  // oldest first
};

}  // namespace sp::proxy
