// One shard's connection as an execution sees it (route, scatter, split
// write): send a statement, then read its answer one classified packet at a
// time (column count / column definition / row / OK / ERR / EOF). The
// executions never touch sockets or pools: the session hands them channels
// (BackendShardChannel over a borrowed BackendConnection), and unit tests hand
// them scripted ones (tests/unit/proxy/scripted_shard.hpp), as Vitess tests its
// engine primitives with fake shard results.
//
// Reading has two forms so that coroutines stay cheap on the hot path:
// tryNext() answers without suspending when a whole packet is already
// buffered (no coroutine frame), next() waits for one.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <string_view>

#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/response_tracker.hpp"
#include "protocol/text_commands.hpp"
#include "protocol/wire.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

// Why a channel could not deliver its next packet. The channel is broken
// afterwards (never pooled again).
enum class ChannelError : uint8_t {
  kLost,       // the connection failed or the server closed it
  kTimeout,    // no packet within the shard timeout (the server's query was killed)
  kMalformed,  // the server broke the protocol
};

// One packet of a shard's answer and what it is in the answer.
struct ShardPacket {
  protocol::ResponseEvent event;
  protocol::ByteView payload;  // valid until the next read
};

using ShardRead = std::expected<ShardPacket, ChannelError>;

class ShardChannel {
 public:
  // mariadb_capabilities: MariaDB's extended flags (column definitions
  // carrying extended type info shape the answer's column packets).
  explicit ShardChannel(uint32_t capabilities, uint32_t mariadb_capabilities = 0)
      : capabilities_(capabilities), mariadb_capabilities_(mariadb_capabilities) {}
  virtual ~ShardChannel() = default;
  ShardChannel(const ShardChannel&) = delete;
  ShardChannel& operator=(const ShardChannel&) = delete;

  // The capability flags negotiated with the server (they shape its answers).
  uint32_t capabilities() const { return capabilities_; }
  uint32_t mariadbCapabilities() const { return mariadb_capabilities_; }

  // Queues a COM_QUERY of `sql` (sent by flush()); its answer is read next.
  void sendQuery(std::string_view sql);
  // Queues a whole command payload as is (a client's COM_QUERY, COM_INIT_DB,
  // an encoded COM_STMT_EXECUTE); `kind`: what answers it.
  void sendCommand(protocol::ByteView payload, protocol::ResponseKind kind);
  virtual awaitable<bool> flush() = 0;

  // The next packet when one is already buffered (never suspends); nullopt
  // when next() would have to wait.
  std::optional<ShardRead> tryNext();
  // The next packet of the answer, waiting for it.
  awaitable<ShardRead> next();

  // Frames one packet of a LOAD DATA LOCAL file (or its closing empty packet)
  // at `seq` for the next flush(), inside the answer being read; returns the
  // next sequence id.
  virtual uint8_t writeFilePacket(protocol::ByteView payload, uint8_t seq) = 0;
  // The sequence id of the last packet read (after the server's LOCAL INFILE
  // request, the file's packets continue from it).
  virtual uint8_t lastSequenceId() const = 0;

  // The whole answer was read.
  bool done() const { return tracker_.done(); }
  // Status flags, affected rows, insert id, warnings of the answer so far.
  const protocol::ResponseTracker& answer() const { return tracker_; }

  // A whole packet is buffered: tryNext() will return it.
  virtual bool hasBufferedPacket() const = 0;
  // Takes what the kernel already holds without waiting; true when bytes came.
  virtual bool tryFill() { return false; }
  virtual void markBroken() = 0;
  virtual bool broken() const = 0;
  // The answer was forwarded whole: the connection is idle again, in the
  // state its last status flags say.
  virtual void answered() {}

 protected:
  // Frames one command packet (sequence id 0) for the next flush().
  virtual void write(protocol::ByteView head, protocol::ByteView rest) = 0;
  virtual std::optional<std::expected<protocol::ByteView, ChannelError>> tryReadPacket() = 0;
  virtual awaitable<std::expected<protocol::ByteView, ChannelError>> readPacket() = 0;

 private:
  ShardRead classify(std::expected<protocol::ByteView, ChannelError> packet);

  uint32_t capabilities_;
  uint32_t mariadb_capabilities_;
  protocol::ResponseTracker tracker_{protocol::ResponseKind::kNone, 0};
};

// A shard's whole answer to a statement that returns no rows to the client
// (split-write parts, the proxy's own statements): OK, the server's ERR, or
// why the channel failed.
struct ShardAnswer {
  std::optional<protocol::OkPacket> ok;
  std::optional<protocol::ErrPacket> error;
  std::optional<ChannelError> failure;
};

// Reads the rest of the answer on `channel` (result-set rows are skipped).
awaitable<ShardAnswer> readAnswer(ShardChannel& channel);

// The server's ERR packet, or a generic one when it does not decode.
protocol::ErrPacket decodeServerError(protocol::ByteView payload);

}  // namespace sp::proxy
