// A ClientSession's writes to keys an online move holds (write_hold.hpp):
// they wait for the cut-over and are planned again when the map switched
// while they waited, so a write never lands on the source after the switch.
#include "proxy/net/client_errors.hpp"
#include "proxy/session/client_session.hpp"
#include "proxy/session/worker.hpp"

namespace sp::proxy {

namespace {

bool writesRows(parser::StatementKind kind) {
  using K = parser::StatementKind;
  return kind == K::kInsert || kind == K::kReplace || kind == K::kUpdate || kind == K::kDelete;
}

// Re-plans are bounded: each one follows a switch of the map, and a write
// cannot meet more than a few switches of its keys in a row.
constexpr int kMaxReplans = 4;

}  // namespace

bool ClientSession::writeMayBeHeld(const parser::StatementInfo& info, const routing::Plan& plan) {
  return writesRows(info.kind) && plan.table;
}

awaitable<std::variant<routing::Plan, protocol::ErrPacket>> ClientSession::planWrite(
    std::string_view sql, const parser::StatementInfo& info, std::span<const routing::ParamValue> params,
    std::span<const parser::Token> tokens, bool record, std::optional<routing::Plan> planned) {
  WriteHold& hold = worker_.context().write_hold;
  for (int replans = 0;; ++replans) {
    routing::Plan plan = planned ? std::move(*planned)
                         : record ? planFor(sql, info, params, tokens)
                                  : choosePlan(sql, info, params, tokens);
    planned.reset();
    if (!writeMayBeHeld(info, plan)) co_return plan;
    Admission admission = co_await write_gate_.admit(plan, planned_map_version_);
    if (admission == Admission::kPass) co_return plan;
    if (admission == Admission::kReplan && replans < kMaxReplans) {
      // A transaction planned against the map it started with; its moved keys
      // now live elsewhere (a transaction bound to the old backend is refused
      // with 9120 by resolve(), never written to the old place).
      if (transaction_map_) transaction_map_ = worker_.context().shard_map.load();
      continue;
    }
    HoldRefusal refusal = holdRefusal(admission == Admission::kReplan ? Admission::kTimeout : admission, hold.limits());
    auto code = refusal.code == client_error::kWriteHoldFull.number          ? client_error::kWriteHoldFull
                : refusal.code == client_error::kFleetUnsynchronised.number ? client_error::kFleetUnsynchronised
                                                                              : client_error::kWriteHoldTimeout;
    co_return client_error::make(code, refusal.message);
  }
}

}  // namespace sp::proxy
