// Split-write execution: a multi-row INSERT / REPLACE whose rows land on
// several shards (routing::PlanKind::kMultiWrite; semantics in
// docs/routing.md, "Split writes"). Two forms:
// - parallel (outside a transaction): every part on its own channel, all sent
//   before any answer is read, each autocommitted. All parts succeed: one OK
//   with the summed affected rows and warnings. Some fail: an ERR naming every
//   failed shard with its error and every shard that succeeded with the rows
//   it wrote (nothing is rolled back);
// - on one connection (inside a transaction): the parts one after the other;
//   `atomic` (a real transaction, the caller sent SAVEPOINT) stops at the
//   first failure and rolls the earlier parts back to the savepoint.
// LAST_INSERT_ID: the insert id of the first part that generated one, parts
// taken in the order of their first row.
#pragma once
#include <chrono>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/generic_packets.hpp"
#include "proxy/exec/shard_channel.hpp"
#include "routing/plan.hpp"

namespace sp::proxy {

inline constexpr std::string_view kSplitSavepoint = "SAVEPOINT shardproxy_split";

struct WritePart {
  const routing::RouteTarget* target = nullptr;
  ShardChannel* channel = nullptr;
  ShardAnswer answer;
};

// The summed OK of all parts, or the ERR reporting the failed ones.
using SplitWriteResult = std::expected<protocol::OkPacket, protocol::ErrPacket>;

// `verb`: INSERT or REPLACE (for messages).
awaitable<SplitWriteResult> executeSplitWrite(std::span<WritePart> parts, std::string_view verb,
                                              std::chrono::milliseconds shard_timeout);

struct OneConnectionWrite {
  SplitWriteResult result;
  // The connection failed mid-statement: nothing is known of its state.
  bool lost = false;
  // The connection's status flags after the statement (nullopt: unknown).
  std::optional<uint16_t> status_flags;
};

// All parts on `channel`, in order. `status_before`: the connection's status
// flags before the first part.
awaitable<OneConnectionWrite> executeSplitWriteOnOne(ShardChannel& channel,
                                                     std::span<const routing::RouteTarget> targets, bool atomic,
                                                     std::string_view verb, uint16_t status_before);

// "shard s1 (msg_1 on backend db1)": a part in messages.
std::string splitPartLabel(const routing::RouteTarget& target);

// The sum of the parts' OKs: affected rows and warnings added, the first insert id.
protocol::OkPacket summedOk(std::span<const protocol::OkPacket> oks);

}  // namespace sp::proxy
