// Test doubles for the executions (proxy/exec/shard_channel.hpp, client_sink.hpp):
// a shard whose answers are a script of packets (and failures), a client
// that records what it was sent, and a runner for one coroutine.
#pragma once
#include <deque>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/resultset.hpp"
#include "proxy/net/client_sink.hpp"
#include "proxy/exec/shard_channel.hpp"

namespace sp::proxy::test {

inline constexpr uint32_t kClassicCapabilities =
    protocol::cap::kProtocol41 | protocol::cap::kTransactions | protocol::cap::kSecureConnection;

class ScriptedShard final : public ShardChannel {
 public:
  explicit ScriptedShard(uint32_t capabilities = kClassicCapabilities) : ShardChannel(capabilities) {}

  // What was written: each command payload as text ("\x03SELECT 1").
  std::vector<std::string> sent;
  // LOAD DATA LOCAL packets written, with their sequence ids.
  std::vector<std::pair<std::string, uint8_t>> file_packets;
  uint8_t writeFilePacket(protocol::ByteView payload, uint8_t seq) override {
    file_packets.emplace_back(std::string(payload.begin(), payload.end()), seq);
    return static_cast<uint8_t>(seq + 1);
  }
  uint8_t lastSequenceId() const override { return 1; }
  bool flush_fails = false;

  // The next packet of the script; `after_wait`: not yet buffered (tryNext()
  // returns nothing, next() waits for it).
  ScriptedShard& packet(protocol::Bytes payload, bool after_wait = false) {
    steps_.push_back({std::move(payload), std::nullopt, after_wait});
    return *this;
  }
  // The channel fails while waiting for its next packet.
  ScriptedShard& failure(ChannelError error) {
    steps_.push_back({{}, error, true});
    return *this;
  }
  // A result set's column count, definitions and their EOF.
  ScriptedShard& header(const std::vector<protocol::ColumnDefinition41>& columns,
                        uint16_t status = protocol::status::kAutocommit) {
    protocol::Bytes b;
    protocol::encodeColumnCount(columns.size(), b);
    packet(b);
    for (const auto& c : columns) {
      b.clear();
      protocol::encode(c, b);
      packet(b);
    }
    return eof(status);
  }
  ScriptedShard& row(const std::vector<std::optional<std::string>>& values, bool after_wait = false) {
    protocol::Bytes b;
    protocol::encodeTextRow(values, b);
    return packet(b, after_wait);
  }
  ScriptedShard& resultSet(const std::vector<protocol::ColumnDefinition41>& columns,
                           const std::vector<std::vector<std::optional<std::string>>>& rows,
                           uint16_t status = protocol::status::kAutocommit) {
    header(columns, status);
    for (const auto& r : rows) row(r);
    return eof(status);
  }
  ScriptedShard& eof(uint16_t status = protocol::status::kAutocommit) {
    protocol::Bytes b;
    protocol::encode(protocol::EofPacket{0, status}, b);
    return packet(b);
  }
  ScriptedShard& ok(uint64_t affected = 0, uint64_t insert_id = 0, uint16_t warnings = 0,
                    uint16_t status = protocol::status::kAutocommit) {
    protocol::OkPacket m;
    m.affected_rows = affected;
    m.last_insert_id = insert_id;
    m.warnings = warnings;
    m.status_flags = status;
    protocol::Bytes b;
    protocol::encode(m, capabilities(), b);
    return packet(b);
  }
  ScriptedShard& err(uint16_t code, std::string state, std::string message) {
    protocol::Bytes b;
    protocol::encode(protocol::ErrPacket{code, std::move(state), std::move(message)}, b);
    return packet(b);
  }
  bool scriptDone() const { return steps_.empty(); }

  awaitable<bool> flush() override { co_return !flush_fails; }
  bool hasBufferedPacket() const override {
    return !broken_ && !steps_.empty() && !steps_.front().after_wait && !steps_.front().error;
  }
  void markBroken() override { broken_ = true; }
  bool broken() const override { return broken_; }
  int answered_calls = 0;
  void answered() override { ++answered_calls; }

 protected:
  void write(protocol::ByteView head, protocol::ByteView rest) override {
    sent.emplace_back(std::string(head.begin(), head.end()) + std::string(rest.begin(), rest.end()));
  }
  std::optional<std::expected<protocol::ByteView, ChannelError>> tryReadPacket() override {
    if (broken_) return std::unexpected(ChannelError::kLost);
    if (!hasBufferedPacket()) return std::nullopt;
    return take();
  }
  awaitable<std::expected<protocol::ByteView, ChannelError>> readPacket() override {
    if (broken_ || steps_.empty()) {
      broken_ = true;
      co_return std::unexpected(ChannelError::kLost);
    }
    co_return take();
  }

 private:
  struct Step {
    protocol::Bytes payload;
    std::optional<ChannelError> error;
    bool after_wait = false;
  };
  std::expected<protocol::ByteView, ChannelError> take() {
    Step step = std::move(steps_.front());
    steps_.pop_front();
    if (step.error) {
      broken_ = true;
      return std::unexpected(*step.error);
    }
    current_ = std::move(step.payload);
    return protocol::ByteView(current_);
  }
  std::deque<Step> steps_;
  protocol::Bytes current_;
  bool broken_ = false;
};

// The client side: every packet with its sequence id.
class RecordingClient final : public ClientSink {
 public:
  struct Packet {
    uint8_t seq;
    protocol::Bytes payload;
  };
  std::vector<Packet> packets;
  int flushes = 0;
  bool flush_fails = false;
  const protocol::TrackingSettings* client_tracking = nullptr;  // what tracking() answers

  uint8_t append(protocol::ByteView payload, uint8_t seq) override {
    packets.push_back({seq, protocol::Bytes(payload.begin(), payload.end())});
    pending_ += payload.size() + 4;
    return static_cast<uint8_t>(seq + 1);
  }
  size_t pendingOutput() const override { return pending_; }
  const protocol::TrackingSettings* tracking() const override { return client_tracking; }
  awaitable<bool> flush() override {
    pending_ = 0;
    ++flushes;
    co_return !flush_fails;
  }

 private:
  size_t pending_ = 0;
};

// Runs one coroutine to its end and returns its value.
template <class T>
T runToEnd(awaitable<T> work) {
  asio::io_context io;
  std::optional<T> out;
  asio::co_spawn(io, std::move(work), [&](std::exception_ptr e, T value) {
    if (e) std::rethrow_exception(e);
    out = std::move(value);
  });
  io.run();
  return std::move(*out);
}

inline protocol::ColumnDefinition41 column(std::string name, protocol::ColumnType type) {
  protocol::ColumnDefinition41 c;
  c.name = std::move(name);
  c.org_name = c.name;
  c.type = type;
  c.character_set = 63;
  c.column_length = 11;
  return c;
}

}  // namespace sp::proxy::test
