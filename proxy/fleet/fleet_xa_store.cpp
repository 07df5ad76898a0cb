#include "proxy/fleet/fleet_xa_store.hpp"

#include <spdlog/spdlog.h>

#include "coord/etcd_messages.hpp"
#include "coord/fleet_records.hpp"
#include "coord/xa_records.hpp"
#include "proxy/fleet/fleet_agent.hpp"

namespace sp::proxy {

namespace {

int64_t unixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

XaStoredOutcome stored(coord::XaOutcome outcome) {
  return outcome == coord::XaOutcome::kCommit ? XaStoredOutcome::kCommit : XaStoredOutcome::kRollback;
}

// The outcome a failed only-if-absent create found in force (its txn's read of the key).
std::expected<XaStoredOutcome, std::string> existing(const coord::EtcdTxnResponse& txn) {
  if (txn.range_kvs.empty()) return std::unexpected("the decision record was neither created nor found");
  auto record = coord::decodeXaDecision(txn.range_kvs.front().value);
  if (!record) return std::unexpected(record.error());
  return stored(record->outcome);
}

}  // namespace

int64_t FleetXaStore::lease() const {
  const FleetAgent* agent = agent_.load();
  return agent ? agent->lease() : 0;
}

std::expected<std::string, std::string> FleetXaStore::call(const std::string& target, const std::string& body,
                                                           bool* reached) {
  return runEtcdCall<std::expected<std::string, std::string>>(
      [&](EtcdClient& c) { return c.call(target, body, reached); }, client_);
}

XaDecisionWrite FleetXaStore::recordCommit(const std::string& gtrid, const std::vector<std::string>& branches) {
  const int64_t held = lease();
  if (held == 0) {
    spdlog::warn("XA {}: no session with etcd: the commit decision is not written, the transaction rolls back", gtrid);
    return XaDecisionWrite::kRefused;
  }
  const coord::XaDecisionRecord record{coord::XaOutcome::kCommit, config_.name, branches, unixMs()};
  const coord::EtcdLeaseFence fence{coord::memberKey(config_.etcd_prefix, config_.name), held};
  bool reached = false;
  auto answer = call("/v3/kv/txn",
                     coord::etcdFencedCreateRequest(coord::xaDecisionKey(config_.etcd_prefix, gtrid),
                                                    coord::encodeXaDecision(record), &fence),
                     &reached);
  if (!answer && !reached) {
    // No endpoint even accepted a connection: the write never left.
    spdlog::warn("XA {}: etcd unreachable: the commit decision is not written, the transaction rolls back: {}", gtrid,
                 answer.error());
    return XaDecisionWrite::kRefused;
  }
  if (!answer) {
    spdlog::warn("XA {}: the commit decision's write got no answer from etcd: {}", gtrid, answer.error());
    return XaDecisionWrite::kUnknown;
  }
  auto txn = coord::parseEtcdTxn(*answer);
  if (!txn) {
    // An answer that is an error object: etcd refused the request as a whole.
    spdlog::warn("XA {}: etcd refused the commit decision: {}", gtrid, txn.error());
    return XaDecisionWrite::kRefused;
  }
  if (txn->succeeded) return XaDecisionWrite::kRecorded;
  // A failover may have sent the write twice: the first one's record is ours.
  if (auto found = existing(*txn); found && *found == XaStoredOutcome::kCommit) return XaDecisionWrite::kRecorded;
  spdlog::warn("XA {}: commit decision refused: this proxy's member key no longer carries lease {} "
               "(or recovery settled the id)", gtrid, held);
  return XaDecisionWrite::kRefused;
}

void FleetXaStore::forget(const std::string& gtrid) {
  auto answer = call("/v3/kv/deleterange",
                     coord::etcdDeleteRequest(coord::xaDecisionKey(config_.etcd_prefix, gtrid), false));
  if (!answer) spdlog::info("XA {}: decision record not deleted ({}): recovery cleans it up", gtrid, answer.error());
}

std::expected<XaFleetSnapshot, std::string> FleetXaStore::snapshot() {
  XaFleetSnapshot out;
  // Members first: a member missing here is gone for good (its lease ended),
  // so reading the decisions after it cannot miss one of its commits.
  const std::string members = coord::membersPrefix(config_.etcd_prefix);
  auto answer = call("/v3/kv/range", coord::etcdRangeRequest(members, true, true));
  if (!answer) return std::unexpected("read the members: " + answer.error());
  auto range = coord::parseEtcdRange(*answer);
  if (!range) return std::unexpected("read the members: " + range.error());
  for (const auto& kv : range->kvs) out.members.insert(kv.key.substr(members.size()));
  answer = call("/v3/kv/range", coord::etcdRangeRequest(coord::xaDecisionsPrefix(config_.etcd_prefix), true));
  if (!answer) return std::unexpected("read the decisions: " + answer.error());
  range = coord::parseEtcdRange(*answer);
  if (!range) return std::unexpected("read the decisions: " + range.error());
  for (const auto& kv : range->kvs) {
    const std::string gtrid = coord::xaDecisionGtrid(config_.etcd_prefix, kv.key);
    auto record = coord::decodeXaDecision(kv.value);
    // A record that cannot be read is not guessed at: its branches wait.
    if (!record) return std::unexpected(kv.key + ": " + record.error());
    out.decisions[gtrid] = {stored(record->outcome), kv.create_revision};
  }
  return out;
}

std::expected<XaStoredOutcome, std::string> FleetXaStore::settle(const std::string& gtrid) {
  const coord::XaDecisionRecord record{coord::XaOutcome::kRollback, config_.name, {}, unixMs()};
  auto answer = call("/v3/kv/txn", coord::etcdFencedCreateRequest(coord::xaDecisionKey(config_.etcd_prefix, gtrid),
                                                                   coord::encodeXaDecision(record), nullptr));
  if (!answer) return std::unexpected(answer.error());
  auto txn = coord::parseEtcdTxn(*answer);
  if (!txn) return std::unexpected(txn.error());
  if (txn->succeeded) return XaStoredOutcome::kRollback;
  return existing(*txn);
}

void FleetXaStore::remove(const std::string& gtrid, int64_t create_revision) {
  auto answer = call("/v3/kv/txn", coord::etcdGuardedDeleteRequest(coord::xaDecisionKey(config_.etcd_prefix, gtrid),
                                                                    create_revision));
  if (!answer) spdlog::info("XA {}: decision record not cleaned up yet: {}", gtrid, answer.error());
}

}  // namespace sp::proxy
