// The end of a global transaction over MariaDB XA branches (docs/routing.md,
// "Transactions across backends"): one branch commits in one phase
// (XA END + XA COMMIT ... ONE PHASE); several commit in two: XA END and
// XA PREPARE on every branch, the decision written durably, then XA COMMIT
// on each. Any failure before the decision rolls every branch back.
//
// The protocol sees branches only through XaParticipant and the decision
// log through XaDecisions, so it is unit-tested with scripted participants
// (tests/unit/proxy/exec/xa_commit_test.cpp); the session adapts its
// backend connections, the process its SQLite log.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "protocol/generic_packets.hpp"
#include "proxy/core/xa_fleet_store.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

// One XA statement's answer on a branch.
struct XaReply {
  enum class Kind : uint8_t { kOk, kServerError, kLost };
  Kind kind = Kind::kOk;
  protocol::ErrPacket error;  // kServerError: the server's ERR
  uint16_t status_flags = 0;  // kOk: the server's status flags
  uint16_t warnings = 0;      // kOk: its warning count (XA ROLLBACK of a MyISAM change: 1196)
  bool ok() const { return kind == Kind::kOk; }
};

class XaParticipant {
 public:
  virtual ~XaParticipant() = default;
  // The branch qualifier (the backend's name).
  virtual const std::string& name() const = 0;
  virtual awaitable<XaReply> run(std::string sql) = 0;
  // `first`, then `second` whatever the first answered: a connection sends
  // both in one write (one round trip). A lost branch loses both.
  virtual awaitable<std::pair<XaReply, XaReply>> runPair(std::string first, std::string second);
};

class XaDecisions {
 public:
  virtual ~XaDecisions() = default;
  // kRecorded: durable (fsync'ed, or in etcd) when it returns; kRefused:
  // certainly not recorded; kUnknown: maybe recorded (etcd gave no answer).
  virtual awaitable<XaDecisionWrite> recordCommit(const std::string& gtrid) = 0;
  // Every branch committed: the decision is no longer needed.
  virtual void forget(const std::string& gtrid) = 0;
};

// Where a test-only fail point may stop the process (SHARDPROXY_XA_FAILPOINT).
enum class XaStep : uint8_t {
  kAfterFirstPrepare,  // one branch prepared, no decision
  kAfterPrepares,      // every branch prepared, no decision
  kAfterDecision,      // decision durable, no XA COMMIT sent
  kBetweenCommits,     // the first branch committed, not the others
};
std::optional<XaStep> parseXaStep(std::string_view name);
using XaFailPoint = std::function<void(XaStep)>;

struct XaOutcome {
  bool committed = false;
  // Not committed: the ERR for the client (the server's, or the proxy's 9004).
  protocol::ErrPacket error;
  // Committed, but branches whose XA COMMIT got no answer (recovery finishes them).
  uint32_t unfinished = 0;
  // Not committed yet, not rolled back: the decision write's fate is unknown,
  // every branch stays prepared and recovery settles it (docs/routing.md, "In a fleet").
  bool in_doubt = false;
  std::chrono::microseconds prepare{0};  // XA END + XA PREPARE on every branch
  std::chrono::microseconds commit{0};   // decision + XA COMMIT on every branch (or the one-phase commit)
};

// 'gtrid','bqual' as XA statements spell an id (ids are [A-Za-z0-9_-]).
std::string xaIdSql(std::string_view gtrid, std::string_view bqual);

awaitable<XaOutcome> commitGlobal(const std::string& gtrid, std::span<XaParticipant* const> branches,
                                  XaDecisions& decisions, const XaFailPoint& fail);
// XA END (its error ignored: the branch may be idle or rollback-only
// already) and XA ROLLBACK on every branch.
awaitable<void> rollbackGlobal(const std::string& gtrid, std::span<XaParticipant* const> branches);

}  // namespace sp::proxy
