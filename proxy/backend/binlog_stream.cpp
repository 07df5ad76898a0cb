#include "proxy/backend/binlog_stream.hpp"

#include <charconv>
#include <optional>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <fmt/format.h>

#include "protocol/sql_literal.hpp"

namespace sp::proxy {

using namespace boost::asio::experimental::awaitable_operators;

namespace {

std::string describe(const BackendError& e) {
  return e.kind == BackendError::Kind::kServer ? fmt::format("{} ({}): {}", e.code, e.sql_state, e.message)
                                               : e.message;
}

// MariaDB's replica capability "understands GTID events" (MARIA_SLAVE_CAPABILITY_GTID):
// without it the source rewrites GTID events into dummy ones.
constexpr int kMariaSlaveCapabilityGtid = 4;

std::optional<uint64_t> parseOffset(const std::string& text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

conf::BackendConfig replicationBackend(const conf::BackendConfig& backend) {
  conf::BackendConfig out = backend;
  if (!backend.replication_user.empty()) {
    out.user = backend.replication_user;
    out.password = backend.replication_password;
  }
  out.database.clear();
  return out;
}

BinlogStream::BinlogStream(std::unique_ptr<BackendConnection> connection, const protocol::BinlogPosition& from,
                           bool checksum, const BinlogStreamOptions& options)
    : connection_(std::move(connection)), decoder_(from, checksum), options_(options) {}

BinlogStream::~BinlogStream() { close(); }

void BinlogStream::close() {
  if (connection_) connection_->stream().close();
}

awaitable<Expected<std::unique_ptr<BinlogStream>>> BinlogStream::open(const conf::BackendConfig& backend,
                                                                      const protocol::BinlogPosition& from_ref,
                                                                      uint32_t replica_server_id,
                                                                      const BinlogStreamOptions& options_ref) {
  const protocol::BinlogPosition from = from_ref;
  const BinlogStreamOptions options = options_ref;
  const std::string where = fmt::format("binlog of {} ({}:{})", backend.name, backend.address.host, backend.address.port);
  const bool by_gtid = options.gtid_connect_state.has_value();
  if (!by_gtid && (from.file.empty() || from.pos < 4 || from.pos > UINT32_MAX)) {
    co_return std::unexpected(fmt::format("{}: bad start position {}", where, protocol::toString(from)));
  }
  auto opened = co_await BackendConnection::open(backend, kNoDatabase, options.max_event_bytes);
  if (!opened) co_return std::unexpected(fmt::format("{}: {}", where, describe(opened.error())));
  auto conn = std::move(*opened);

  auto checksum = co_await conn->queryRows("SELECT @@global.binlog_checksum");
  if (!checksum) co_return std::unexpected(fmt::format("{}: {}", where, describe(checksum.error())));
  if (checksum->size() != 1 || checksum->front().size() != 1 || !checksum->front()[0]) {
    co_return std::unexpected(where + ": cannot read @@global.binlog_checksum");
  }
  const bool crc32 = *checksum->front()[0] == "CRC32";
  if (!crc32 && *checksum->front()[0] != "NONE") {
    co_return std::unexpected(fmt::format("{}: unsupported binlog_checksum {}", where, *checksum->front()[0]));
  }
  const auto period_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options.heartbeat_period).count();
  std::string setup = fmt::format(
      "SET @master_binlog_checksum = @@global.binlog_checksum, @mariadb_slave_capability = {}, "
      "@master_heartbeat_period = {}",
      kMariaSlaveCapabilityGtid, period_ns);
  if (by_gtid) {
    setup += fmt::format(", @slave_connect_state = {}, @slave_gtid_strict_mode = 0, @slave_gtid_ignore_duplicates = 0",
                         protocol::hexLiteral(*options.gtid_connect_state));
  }
  if (auto ok = co_await conn->command(protocol::Command::kQuery, setup); !ok) {
    co_return std::unexpected(fmt::format("{}: {}", where, describe(ok.error())));
  }

  // COM_BINLOG_DUMP: int<4> position, int<2> flags (0: block at the end
  // and wait for new events), int<4> replica server_id, string<EOF> file.
  protocol::Bytes args;
  protocol::Writer w(args);
  // By GTID: the source finds the position itself (file "", position 4).
  const protocol::BinlogPosition start = by_gtid ? protocol::BinlogPosition{"", 4} : from;
  w.u32(static_cast<uint32_t>(start.pos));
  w.u16(0);
  w.u32(replica_server_id);
  w.raw(start.file);
  const uint8_t command = static_cast<uint8_t>(protocol::Command::kBinlogDump);
  conn->stream().append(protocol::ByteView(&command, 1), args, 0);
  if (!co_await conn->stream().flush()) co_return std::unexpected(where + ": connection lost sending COM_BINLOG_DUMP");
  co_return std::make_unique<BinlogStream>(std::move(conn), start, crc32, options);
}

awaitable<Expected<protocol::BinlogEvent>> BinlogStream::next() {
  if (!connection_ || !connection_->stream().isOpen()) co_return std::unexpected(std::string("binlog stream is closed"));
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer timer(ex);
  timer.expires_after(options_.read_timeout);
  auto got = co_await (connection_->stream().read() || timer.async_wait(kNoThrow));
  if (got.index() == 1) {
    close();
    co_return std::unexpected(fmt::format("binlog stream: nothing (not even a heartbeat) for {} ms at {}",
                                          options_.read_timeout.count(), protocol::toString(position())));
  }
  auto& msg = std::get<0>(got);
  if (!msg) {
    close();
    co_return std::unexpected(fmt::format("binlog stream: connection lost at {}", protocol::toString(position())));
  }
  auto payload = msg->payload;
  if (payload.empty()) co_return std::unexpected(std::string("binlog stream: empty packet"));
  if (payload[0] == 0xff) {
    auto err = serverError(payload);
    close();
    co_return std::unexpected(fmt::format("binlog stream: source error {}", describe(err)));
  }
  if (payload[0] == 0xfe && payload.size() < 9) {
    close();
    co_return std::unexpected(std::string("binlog stream: the source ended the dump"));
  }
  if (payload[0] != 0x00) co_return std::unexpected(std::string("binlog stream: unexpected packet"));
  if (options_.keep_raw) last_raw_.assign(payload.begin() + 1, payload.end());
  auto event = decoder_.decode(payload.subspan(1));
  if (!event) {
    close();
    co_return std::unexpected(fmt::format("binlog stream at {}: {}", protocol::toString(position()),
                                          event.error().message));
  }
  co_return std::move(*event);
}

awaitable<Expected<protocol::BinlogPosition>> binlogEndPosition(BackendConnection& connection) {
  auto rows = co_await connection.queryRows("SHOW BINLOG STATUS");
  if (!rows) co_return std::unexpected("SHOW BINLOG STATUS: " + describe(rows.error()));
  if (rows->size() != 1 || rows->front().size() < 2 || !rows->front()[0] || !rows->front()[1]) {
    co_return std::unexpected(std::string("SHOW BINLOG STATUS: no binary log (log_bin is off)"));
  }
  auto pos = parseOffset(*rows->front()[1]);
  if (!pos) co_return std::unexpected("SHOW BINLOG STATUS: bad position " + *rows->front()[1]);
  co_return protocol::BinlogPosition{*rows->front()[0], *pos};
}

awaitable<Expected<protocol::BinlogPosition>> binlogSnapshotPosition(BackendConnection& connection) {
  auto rows = co_await connection.queryRows("SHOW STATUS LIKE 'binlog_snapshot_%'");
  if (!rows) co_return std::unexpected("SHOW STATUS LIKE 'binlog_snapshot_%': " + describe(rows.error()));
  protocol::BinlogPosition p;
  bool have_pos = false;
  for (const auto& row : *rows) {
    if (row.size() != 2 || !row[0] || !row[1]) continue;
    if (*row[0] == "Binlog_snapshot_file") p.file = *row[1];
    if (*row[0] == "Binlog_snapshot_position") {
      auto pos = parseOffset(*row[1]);
      if (!pos) co_return std::unexpected("bad Binlog_snapshot_position " + *row[1]);
      p.pos = *pos;
      have_pos = true;
    }
  }
  if (p.file.empty() || !have_pos) co_return std::unexpected(std::string("binlog snapshot position unknown (log_bin is off)"));
  co_return p;
}

awaitable<Expected<std::vector<std::string>>> primaryKeyColumns(BackendConnection& connection,
                                                                std::string_view schema, std::string_view table) {
  const std::string sql = fmt::format(
      "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = {} AND TABLE_NAME = {} "
      "AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION",
      protocol::hexLiteral(schema), protocol::hexLiteral(table));
  auto rows = co_await connection.queryRows(sql);
  if (!rows) co_return std::unexpected("primary key of " + std::string(table) + ": " + describe(rows.error()));
  std::vector<std::string> out;
  for (const auto& row : *rows) {
    if (row.size() == 1 && row[0]) out.push_back(*row[0]);
  }
  co_return out;
}

}  // namespace sp::proxy
