#include "proxy/exec/shard_channel.hpp"

namespace sp::proxy {

void ShardChannel::sendQuery(std::string_view sql) {
  tracker_ = protocol::ResponseTracker(protocol::ResponseKind::kQuery, capabilities_, mariadb_capabilities_);
  const auto parts = protocol::commandParts(protocol::ComQuery{sql});
  write(parts.command, parts.argument);
}

void ShardChannel::sendCommand(protocol::ByteView payload, protocol::ResponseKind kind) {
  tracker_ = protocol::ResponseTracker(kind, capabilities_, mariadb_capabilities_);
  write(payload, {});
}

ShardRead ShardChannel::classify(std::expected<protocol::ByteView, ChannelError> packet) {
  if (!packet) return std::unexpected(packet.error());
  auto event = tracker_.onPacket(*packet);
  if (!event) {
    markBroken();
    return std::unexpected(ChannelError::kMalformed);
  }
  return ShardPacket{*event, *packet};
}

std::optional<ShardRead> ShardChannel::tryNext() {
  auto packet = tryReadPacket();
  if (!packet) return std::nullopt;
  return classify(std::move(*packet));
}

awaitable<ShardRead> ShardChannel::next() {
  if (auto ready = tryNext()) co_return *ready;
  // (Awaited as a statement of its own: GCC 12 mishandles awaitable temporaries inside larger expressions.)
  auto packet = co_await readPacket();
  co_return classify(std::move(packet));
}

protocol::ErrPacket decodeServerError(protocol::ByteView payload) {
  auto err = protocol::decodeErrPacket(payload);
  if (!err) return protocol::ErrPacket{1105, "HY000", "error"};
  return std::move(*err);
}

awaitable<ShardAnswer> readAnswer(ShardChannel& channel) {
  ShardAnswer answer;
  while (!channel.done()) {
    auto packet = channel.tryNext();
    if (!packet) {
      auto waited = co_await channel.next();
      packet = std::move(waited);
    }
    if (!*packet) {
      answer.failure = packet->error();
      co_return answer;
    }
    if ((*packet)->event == protocol::ResponseEvent::kErr) answer.error = decodeServerError((*packet)->payload);
  }
  if (answer.error) co_return answer;
  const auto& tracker = channel.answer();
  protocol::OkPacket ok;
  ok.status_flags = tracker.statusFlags();
  ok.affected_rows = tracker.affectedRows();
  ok.last_insert_id = tracker.lastInsertId();
  ok.warnings = tracker.warnings();
  answer.ok = ok;
  co_return answer;
}

}  // namespace sp::proxy
