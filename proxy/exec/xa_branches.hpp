// The pieces of the commit protocol (xa_commit.hpp) a session plugs in:
// its branch connections as participants, the decision log it writes (etcd
// in a fleet, else SQLite) with the registry's phases, and the test-only
// fail point SHARDPROXY_XA_FAILPOINT (docs/configuration.md).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "proxy/backend/backend_connection.hpp"
#include "proxy/core/xa_registry.hpp"
#include "proxy/exec/xa_commit.hpp"

namespace sp::proxy {

// A branch's connection as the commit protocol sees it.
class ConnectionBranch final : public XaParticipant {
 public:
  ConnectionBranch(BackendConnection& conn, const std::string& name) : conn_(conn), name_(name) {}
  const std::string& name() const override { return name_; }
  awaitable<XaReply> run(std::string sql) override;
  awaitable<std::pair<XaReply, XaReply>> runPair(std::string first, std::string second) override;
  std::optional<uint16_t> lastStatus() const { return last_status_; }
  // Of the last statement that answered OK (for a rollback: XA ROLLBACK's).
  uint16_t lastWarnings() const { return last_warnings_; }
  BackendConnection& connection() { return conn_; }

 private:
  BackendConnection& conn_;
  XaReply replyOf(const BackendConnection::OkOrError& r);

  const std::string& name_;
  std::optional<uint16_t> last_status_;
  uint16_t last_warnings_ = 0;
};

// The decision log (etcd in a fleet, else SQLite) and the registry's phase,
// as the protocol writes them.
class LoggedDecisions final : public XaDecisions {
 public:
  LoggedDecisions(XaRegistry& registry, std::vector<std::string> branches)
      : registry_(registry), branches_(std::move(branches)) {}
  awaitable<XaDecisionWrite> recordCommit(const std::string& gtrid) override;
  void forget(const std::string& gtrid) override;

 private:
  XaDecisionWrite write(const std::string& gtrid);

  XaRegistry& registry_;
  std::vector<std::string> branches_;
};

// The warnings the branches' last statements left (after a rollback: the XA
// ROLLBACKs', 1196 when a non-transactional table kept its change), read
// with SHOW WARNINGS from each branch that has some.
struct BranchWarnings {
  uint16_t count = 0;
  BackendConnection::TextRows conditions;
};
awaitable<BranchWarnings> readWarnings(std::span<const std::unique_ptr<ConnectionBranch>> branches);

// SHARDPROXY_XA_FAILPOINT=<step>[:<n>[:pause_ms]] (test only): the n-th time
// (default 1) a commit reaches <step> the process _exits, or with pause_ms
// that commit's worker thread sleeps that long (a test kills a backend
// meanwhile). Read once; empty when unset or malformed.
const XaFailPoint& xaFailPointFromEnvironment();

}  // namespace sp::proxy
