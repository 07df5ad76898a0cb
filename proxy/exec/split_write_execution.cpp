#include "proxy/exec/split_write_execution.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "protocol/constants.hpp"
#include "proxy/net/client_errors.hpp"

namespace sp::proxy {

namespace {

constexpr std::string_view kRollbackToSavepoint = "ROLLBACK TO SAVEPOINT shardproxy_split";
constexpr std::string_view kReleaseSavepoint = "RELEASE SAVEPOINT shardproxy_split";

std::string rowsText(uint64_t n) { return fmt::format("{} row{}", n, n == 1 ? "" : "s"); }

// Why a part has no answer: its outcome is unknown.
std::string failureText(ChannelError e, std::chrono::milliseconds timeout) {
  switch (e) {
    case ChannelError::kTimeout:
      return fmt::format("no answer within {} ms (scatter.shard_timeout_ms); its connection was closed and the "
                         "part may or may not have been applied",
                         timeout.count());
    case ChannelError::kMalformed:
      return "malformed response; the part may or may not have been applied";
    case ChannelError::kLost:
      break;
  }
  return "connection lost; the part may or may not have been applied";
}

// The ERR for a split write with failed parts: every failure, every success.
protocol::ErrPacket partialFailure(std::span<const WritePart> parts, std::string_view verb,
                                   std::chrono::milliseconds timeout) {
  std::string failed, succeeded;
  size_t failures = 0;
  for (const auto& p : parts) {
    if (p.answer.ok) {
      succeeded += fmt::format("{}{}: {}", succeeded.empty() ? "" : "; ", splitPartLabel(*p.target),
                               rowsText(p.answer.ok->affected_rows));
      continue;
    }
    ++failures;
    const auto& e = p.answer.error;
    std::string why = e ? fmt::format("ERROR {} ({}): {}", e->error_code, e->sql_state, e->message)
                        : failureText(p.answer.failure.value_or(ChannelError::kLost), timeout);
    failed += fmt::format("{}{}: {}", failed.empty() ? "" : "; ", splitPartLabel(*p.target), why);
  }
  std::string message = fmt::format("shardproxy: {} split over {} shards: {} of them failed; nothing was rolled back. "
                                    "Failed: {}. Succeeded: {}.",
                                    verb, parts.size(), failures, failed, succeeded.empty() ? "none" : succeeded);
  // Nothing written and one server error everywhere: that error, as one server would send it.
  const auto& first = parts.front().answer.error;
  bool same_error = succeeded.empty() && first;
  for (const auto& p : parts) same_error = same_error && p.answer.error && p.answer.error->error_code == first->error_code;
  if (same_error) return protocol::ErrPacket{first->error_code, first->sql_state, message};
  return client_error::make(client_error::kSplitWritePartial, message);
}

awaitable<ShardAnswer> runStatement(ShardChannel& channel, std::string_view sql) {
  channel.sendQuery(sql);
  const bool sent = co_await channel.flush();
  if (!sent) {
    ShardAnswer lost;
    lost.failure = ChannelError::kLost;
    co_return lost;
  }
  co_return co_await readAnswer(channel);
}

}  // namespace

std::string splitPartLabel(const routing::RouteTarget& t) {
  return fmt::format("shard {} ({} on backend {})", t.shard, t.physical_table, t.backend);
}

protocol::OkPacket summedOk(std::span<const protocol::OkPacket> oks) {
  protocol::OkPacket sum;
  uint32_t warnings = 0;
  for (const auto& ok : oks) {
    sum.affected_rows += ok.affected_rows;
    warnings += ok.warnings;
    if (sum.last_insert_id == 0) sum.last_insert_id = ok.last_insert_id;
  }
  sum.warnings = static_cast<uint16_t>(std::min<uint32_t>(warnings, 0xffff));
  return sum;
}

awaitable<SplitWriteResult> executeSplitWrite(std::span<WritePart> parts, std::string_view verb,
                                              std::chrono::milliseconds shard_timeout) {
  // All parts in flight at once, then the answers.
  for (auto& part : parts) part.channel->sendQuery(part.target->sql);
  for (auto& part : parts) {
    const bool sent = co_await part.channel->flush();
    (void)sent;  // a failed send reads as a lost connection
  }
  std::vector<protocol::OkPacket> oks;
  for (auto& part : parts) {
    part.answer = co_await readAnswer(*part.channel);
    if (part.answer.ok) oks.push_back(*part.answer.ok);
  }
  if (oks.size() != parts.size()) co_return std::unexpected(partialFailure(parts, verb, shard_timeout));
  co_return summedOk(oks);
}

awaitable<OneConnectionWrite> executeSplitWriteOnOne(ShardChannel& channel,
                                                     std::span<const routing::RouteTarget> targets, bool atomic,
                                                     std::string_view verb, uint16_t status_before) {
  OneConnectionWrite out{protocol::OkPacket{}, false, std::nullopt};
  std::vector<WritePart> parts(targets.size());
  std::vector<protocol::OkPacket> oks;
  uint16_t last_status = status_before;  // of the connection's last successful statement
  for (size_t i = 0; i < parts.size(); ++i) {
    parts[i].target = &targets[i];
    parts[i].answer = co_await runStatement(channel, targets[i].sql);
    const auto& answer = parts[i].answer;
    if (answer.failure) {
      out.lost = true;
      out.status_flags.reset();
      co_return out;
    }
    if (answer.ok) {
      oks.push_back(*answer.ok);
      last_status = answer.ok->status_flags;
    } else if (atomic) {
      break;
    }
  }
  if (oks.size() == parts.size()) {
    out.status_flags = oks.back().status_flags;
    if (atomic) {
      auto released = co_await runStatement(channel, kReleaseSavepoint);
      if (released.ok) out.status_flags = released.ok->status_flags;
    }
    out.result = summedOk(oks);
    co_return out;
  }
  if (!atomic) {
    if (!oks.empty()) out.status_flags = oks.back().status_flags;
    out.result = std::unexpected(partialFailure(parts, verb, {}));
    co_return out;
  }
  // Atomic: the parts stopped at the first failure. Roll the statement's
  // earlier parts back to the savepoint (the transaction stays open, as
  // after any failed statement) and answer with that part's error.
  const WritePart& failed = parts[oks.size()];
  auto undone = co_await runStatement(channel, kRollbackToSavepoint);
  if (undone.ok) {
    last_status = undone.ok->status_flags;
    auto released = co_await runStatement(channel, kReleaseSavepoint);
    if (released.ok) last_status = released.ok->status_flags;
  }
  out.status_flags = last_status;
  // The server already ended the transaction (deadlock, rollback on timeout): no savepoint left.
  if (undone.error) *out.status_flags &= ~protocol::status::kInTrans;
  if (channel.broken()) out.status_flags.reset();
  std::string note = undone.ok ? "; the statement's parts on other shards were rolled back (to a savepoint), the "
                                 "transaction is still open"
                               : "";
  const auto& error = *failed.answer.error;
  out.result = std::unexpected(protocol::ErrPacket{
      error.error_code, error.sql_state, fmt::format("shardproxy: {}: {}{}", splitPartLabel(*failed.target), error.message, note)});
  co_return out;
}

}  // namespace sp::proxy
