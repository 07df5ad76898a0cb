#include "proxy/exec/xa_commit.hpp"

#include <fmt/format.h>

#include "proxy/net/client_errors.hpp"

namespace sp::proxy {

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint16_t kXaerNota = 1397;  // XAER_NOTA: the server knows no such branch (already finished)

std::chrono::microseconds since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t);
}

void failAt(const XaFailPoint& fail, XaStep step) {
  if (fail) fail(step);
}

// Why the global transaction was rolled back, for the client.
protocol::ErrPacket abortError(const XaReply& reply, const XaParticipant& branch, std::string_view step) {
  if (reply.kind == XaReply::Kind::kServerError) return reply.error;
  return client_error::make(client_error::kTransactionLost,
                            fmt::format("shardproxy: the transaction was rolled back: backend {} was lost at {}",
                                        branch.name(), step));
}

awaitable<XaOutcome> commitOnePhase(const std::string& gtrid, XaParticipant& branch) {
  XaOutcome out;
  const auto start = Clock::now();
  const std::string id = xaIdSql(gtrid, branch.name());
  // One round trip, as a plain COMMIT: after a failed XA END the branch is
  // still active and the server refuses the XA COMMIT (1399), committing
  // nothing.
  auto [end, commit] = co_await branch.runPair("XA END " + id, "XA COMMIT " + id + " ONE PHASE");
  XaReply r = end.ok() ? std::move(commit) : std::move(end);
  out.commit = since(start);
  if (r.ok()) {
    out.committed = true;
    co_return out;
  }
  // A failed one-phase commit leaves nothing to commit: roll back what remains.
  if (r.kind == XaReply::Kind::kServerError) co_await branch.run("XA ROLLBACK " + id);
  out.error = abortError(r, branch, "COMMIT");
  co_return out;
}

}  // namespace

awaitable<std::pair<XaReply, XaReply>> XaParticipant::runPair(std::string first, std::string second) {
  XaReply a = co_await run(std::move(first));
  if (a.kind == XaReply::Kind::kLost) co_return std::pair<XaReply, XaReply>{a, a};
  XaReply b = co_await run(std::move(second));
  co_return std::pair<XaReply, XaReply>{std::move(a), std::move(b)};
}

std::optional<XaStep> parseXaStep(std::string_view name) {
  if (name == "after_first_prepare") return XaStep::kAfterFirstPrepare;
  if (name == "after_prepares") return XaStep::kAfterPrepares;
  if (name == "after_decision") return XaStep::kAfterDecision;
  if (name == "between_commits") return XaStep::kBetweenCommits;
  return std::nullopt;
}

std::string xaIdSql(std::string_view gtrid, std::string_view bqual) { return fmt::format("'{}','{}'", gtrid, bqual); }

awaitable<void> rollbackGlobal(const std::string& gtrid, std::span<XaParticipant* const> branches) {
  for (XaParticipant* b : branches) {
    const std::string id = xaIdSql(gtrid, b->name());
    XaReply end = co_await b->run("XA END " + id);
    if (end.kind == XaReply::Kind::kLost) continue;  // the server rolls an unprepared branch back itself
    co_await b->run("XA ROLLBACK " + id);
  }
}

awaitable<XaOutcome> commitGlobal(const std::string& gtrid, std::span<XaParticipant* const> branches,
                                  XaDecisions& decisions, const XaFailPoint& fail) {
  if (branches.size() == 1) co_return co_await commitOnePhase(gtrid, *branches.front());
  XaOutcome out;
  auto start = Clock::now();
  for (size_t i = 0; i < branches.size(); ++i) {
    // XA END and XA PREPARE in one write, one round trip per branch: after a
    // failed XA END the branch is not idle, and the server refuses the
    // XA PREPARE (1399), preparing nothing.
    const std::string id = xaIdSql(gtrid, branches[i]->name());
    auto [end, prepare] = co_await branches[i]->runPair("XA END " + id, "XA PREPARE " + id);
    if (!end.ok() || !prepare.ok()) {
      out.error = end.ok() ? abortError(prepare, *branches[i], "XA PREPARE") : abortError(end, *branches[i], "XA END");
      co_await rollbackGlobal(gtrid, branches);
      co_return out;
    }
    if (i == 0) failAt(fail, XaStep::kAfterFirstPrepare);
  }
  failAt(fail, XaStep::kAfterPrepares);
  out.prepare = since(start);
  start = Clock::now();
  const XaDecisionWrite written = co_await decisions.recordCommit(gtrid);
  if (written == XaDecisionWrite::kUnknown) {
    // Rolling back now could undo branches of a transaction etcd recorded as
    // committed: the branches stay prepared; recovery reads etcd and finishes them.
    out.in_doubt = true;
    out.error = client_error::make(client_error::kXaDecisionUnknown,
                                   "shardproxy: COMMIT's outcome is not known: etcd did not confirm the commit decision; "
                                   "the transaction is committed if and only if the decision was recorded, and recovery "
                                   "finishes it either way once etcd answers");
    co_return out;
  }
  if (written != XaDecisionWrite::kRecorded) {
    out.error = client_error::make(client_error::kXaDecisionLog,
                                   "shardproxy: the commit decision could not be written (transactions.decision_log, "
                                   "or etcd in a fleet): the transaction was rolled back");
    co_await rollbackGlobal(gtrid, branches);
    co_return out;
  }
  out.committed = true;  // from here on the transaction is committed, whatever follows
  failAt(fail, XaStep::kAfterDecision);
  for (size_t i = 0; i < branches.size(); ++i) {
    XaReply r = co_await branches[i]->run("XA COMMIT " + xaIdSql(gtrid, branches[i]->name()));
    const bool done = r.ok() || (r.kind == XaReply::Kind::kServerError && r.error.error_code == kXaerNota);
    if (!done) ++out.unfinished;
    if (i == 0) failAt(fail, XaStep::kBetweenCommits);
  }
  if (out.unfinished == 0) decisions.forget(gtrid);
  out.commit = since(start);
  co_return out;
}

}  // namespace sp::proxy
