// Where a proxy of a fleet keeps the commit decisions of its global
// transactions (docs/routing.md, "In a fleet"): etcd, so that any proxy can
// finish the transactions of one that died. An interface here (proxy/core)
// because the session writes decisions and recovery reads them, while the
// etcd side lives in proxy/fleet (fleet_xa_store.hpp), which the session
// must not depend on. Calls block their thread (at most the etcd endpoints ×
// fleet.etcd.request_timeout_ms), as the SQLite log's fsync does.
#pragma once
#include <cstdint>
#include <expected>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace sp::proxy {

enum class XaDecisionWrite : uint8_t {
  kRecorded,  // the commit decision is durable: the transaction is committed
  kRefused,   // certainly not recorded (no session with etcd, or this proxy's lease is no longer its member key's)
  kUnknown,   // etcd did not answer whether it was: the branches stay prepared until recovery settles it
};

enum class XaStoredOutcome : uint8_t { kCommit, kRollback };

// One read of etcd by a recovery pass: who is alive and what was decided.
struct XaFleetSnapshot {
  struct Decision {
    XaStoredOutcome outcome = XaStoredOutcome::kCommit;
    int64_t create_revision = 0;
  };
  std::set<std::string> members;               // names whose member key exists (their lease is alive)
  std::map<std::string, Decision> decisions;   // by gtrid
};

class XaFleetStore {
 public:
  virtual ~XaFleetStore() = default;
  // This proxy's fleet member name (it is part of every gtrid it creates).
  virtual const std::string& member() const = 0;
  // The fenced write: created only if absent and only while this proxy's
  // member key carries the lease of its current session.
  virtual XaDecisionWrite recordCommit(const std::string& gtrid, const std::vector<std::string>& branches) = 0;
  // Every branch committed: the record is no longer needed (best effort; recovery cleans up what stays).
  virtual void forget(const std::string& gtrid) = 0;
  virtual std::expected<XaFleetSnapshot, std::string> snapshot() = 0;
  // Makes the outcome of `gtrid` final: creates a rollback record unless a
  // record exists, and returns the outcome in force afterwards.
  virtual std::expected<XaStoredOutcome, std::string> settle(const std::string& gtrid) = 0;
  // Deletes the record of `gtrid` if it is still the one created at `create_revision`.
  virtual void remove(const std::string& gtrid, int64_t create_revision) = 0;
};

}  // namespace sp::proxy
