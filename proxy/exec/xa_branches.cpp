#include "proxy/exec/xa_branches.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include "proxy/core/xa_decision_log.hpp"
#include "proxy/core/xa_fleet_store.hpp"

namespace sp::proxy {

awaitable<XaReply> ConnectionBranch::run(std::string sql) {
  auto r = co_await conn_.command(protocol::Command::kQuery, sql);
  co_return replyOf(r);
}

awaitable<std::pair<XaReply, XaReply>> ConnectionBranch::runPair(std::string first, std::string second) {
  auto [a, b] = co_await conn_.queryPair(first, second);
  XaReply ra = replyOf(a);
  XaReply rb = replyOf(b);
  co_return std::pair<XaReply, XaReply>{std::move(ra), std::move(rb)};
}

XaReply ConnectionBranch::replyOf(const BackendConnection::OkOrError& r) {
  XaReply reply;
  if (r) {
    reply.status_flags = r->status_flags;
    reply.warnings = r->warnings;
    last_warnings_ = r->warnings;
    last_status_ = r->status_flags;
  } else if (r.error().kind == BackendError::Kind::kServer) {
    reply.kind = XaReply::Kind::kServerError;
    reply.error = r.error().toErrPacket();
  } else {
    reply.kind = XaReply::Kind::kLost;
  }
  return reply;
}

awaitable<XaDecisionWrite> LoggedDecisions::recordCommit(const std::string& gtrid) {
  XaDecisionWrite written;
  if (registry_.decision_writer) {
    // On the writer threads: this worker's other sessions go on meanwhile.
    written = co_await asio::co_spawn(
        *registry_.decision_writer, [this, &gtrid]() -> awaitable<XaDecisionWrite> { co_return write(gtrid); },
        asio::use_awaitable);
  } else {
    written = write(gtrid);
  }
  if (written == XaDecisionWrite::kRecorded) registry_.setPhase(gtrid, XaPhase::kCommitting);
  if (written == XaDecisionWrite::kUnknown) registry_.counters.decisions_unknown.fetch_add(1, std::memory_order_relaxed);
  co_return written;
}

void LoggedDecisions::forget(const std::string& gtrid) {
  // An fsync'ed delete nobody waits for: on the writer threads when set (a
  // decision outliving its branches is cleaned up by recovery).
  auto drop = [&registry = registry_, gtrid] {
    if (registry.fleet) registry.fleet->forget(gtrid);
    else if (registry.log) registry.log->forget(gtrid);
  };
  if (registry_.decision_writer) asio::post(*registry_.decision_writer, std::move(drop));
  else drop();
}

XaDecisionWrite LoggedDecisions::write(const std::string& gtrid) {
  if (registry_.fleet) return registry_.fleet->recordCommit(gtrid, branches_);
  if (!registry_.log) return XaDecisionWrite::kRefused;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const bool ok = registry_.log->recordCommit(gtrid, std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
  return ok ? XaDecisionWrite::kRecorded : XaDecisionWrite::kRefused;
}

awaitable<BranchWarnings> readWarnings(std::span<const std::unique_ptr<ConnectionBranch>> branches) {
  BranchWarnings out;
  for (const auto& b : branches) {
    if (b->lastWarnings() == 0) continue;
    out.count = static_cast<uint16_t>(std::min<uint32_t>(0xffff, out.count + b->lastWarnings()));
    auto rows = co_await b->connection().queryRows("SHOW WARNINGS");
    if (rows) out.conditions.insert(out.conditions.end(), rows->begin(), rows->end());
  }
  co_return out;
}

namespace {

struct FailPointSpec {
  XaStep step;
  uint64_t nth = 1;
  uint64_t pause_ms = 0;
};

std::optional<FailPointSpec> parseFailPoint(std::string_view text) {
  std::vector<std::string_view> parts;
  while (true) {
    auto colon = text.find(':');
    parts.push_back(text.substr(0, colon));
    if (colon == std::string_view::npos) break;
    text = text.substr(colon + 1);
  }
  auto step = parseXaStep(parts[0]);
  if (!step || parts.size() > 3) return std::nullopt;
  FailPointSpec spec{*step};
  if (parts.size() > 1) spec.nth = std::max<uint64_t>(1, std::strtoull(std::string(parts[1]).c_str(), nullptr, 10));
  if (parts.size() > 2) spec.pause_ms = std::strtoull(std::string(parts[2]).c_str(), nullptr, 10);
  return spec;
}

}  // namespace

const XaFailPoint& xaFailPointFromEnvironment() {
  static const XaFailPoint point = []() -> XaFailPoint {
    const char* env = std::getenv("SHARDPROXY_XA_FAILPOINT");
    if (!env || !*env) return nullptr;
    auto spec = parseFailPoint(env);
    if (!spec) return nullptr;
    spdlog::warn("SHARDPROXY_XA_FAILPOINT={}: test only", env);
    return [spec = *spec, hits = std::make_shared<std::atomic<uint64_t>>(0)](XaStep at) {
      if (at != spec.step || hits->fetch_add(1) + 1 != spec.nth) return;
      if (spec.pause_ms == 0) std::_Exit(86);
      spdlog::warn("SHARDPROXY_XA_FAILPOINT: pausing this commit {} ms", spec.pause_ms);
      std::this_thread::sleep_for(std::chrono::milliseconds(spec.pause_ms));
    };
  }();
  return point;
}

}  // namespace sp::proxy
