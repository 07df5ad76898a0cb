// Scatter-gather execution of a ClientSession: every shard query is sent
// before any answer is read (the shards work in parallel), then the rows are
// pulled in the order routing's ResultMerger needs them and the merged rows
// stream to the client. A shard that fails fails the whole statement with an
// error naming the shard: a partial result is never passed off as complete.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "protocol/binary_row.hpp"
#include "protocol/constants.hpp"
#include "protocol/generic_packets.hpp"
#include "protocol/resultset.hpp"
#include "protocol/response_tracker.hpp"
#include "proxy/abuse_log.hpp"
#include "proxy/backend_pool.hpp"
#include "proxy/client_errors.hpp"
#include "proxy/client_session.hpp"
#include "proxy/pool_capacity.hpp"
#include "proxy/shard_read.hpp"
#include "proxy/worker.hpp"
#include "routing/merge.hpp"

namespace sp::proxy {

namespace status = protocol::status;
using protocol::ResponseEvent;

namespace {

// Bounded memory for merges that must buffer (aggregates keep groups, merge
// sort keeps one row per shard): past scatter.max_merge_bytes the statement
// fails. A shard that leaves the proxy waiting longer than
// scatter.shard_timeout_ms for its next packet fails it too (client_error::kShardTimeout).
constexpr size_t kClientFlushBytes = 256 * 1024;

// Why reading a shard failed, for the client's error.
std::string readFailure(ShardReadError e, std::chrono::milliseconds timeout, std::string_view when) {
  if (e == ShardReadError::kTimeout) {
    return fmt::format("no answer within {} ms (scatter.shard_timeout_ms){}; its connection was closed and "
                       "its query killed",
                       timeout.count(), when);
  }
  return fmt::format("connection lost{}", when);
}

struct ShardStream {
  BackendPool* pool = nullptr;
  std::unique_ptr<BackendConnection> conn;
  const routing::RouteTarget* target = nullptr;
  std::unique_ptr<protocol::ResponseTracker> tracker;
  size_t column_count = 0;
  bool finished = false;  // its rows were fully read
  // For the slow-query log: when its query left, how long until its last packet, its rows.
  std::chrono::steady_clock::time_point sent{};
  uint64_t micros = 0;
  uint64_t rows = 0;
};

void noteShardDone(ShardStream& s) {
  s.micros = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - s.sent).count());
}

std::string shardLabel(const routing::RouteTarget& t) {
  return fmt::format("{} ({} on backend {})", t.shard.empty() ? t.physical_table : t.shard, t.physical_table, t.backend);
}

using ShardStreamPtr = std::unique_ptr<ShardStream>;



void releaseScatter(std::vector<ShardStreamPtr>& shards) {
  for (auto& s : shards) {
    if (!s->conn) continue;
    // A connection whose response was not read to the end is not reusable,
    // nor one left inside a transaction.
    bool open_transaction = s->tracker && (s->tracker->statusFlags() & status::kInTrans);
    if (!s->finished || open_transaction) s->conn->markBroken();
    s->pool->release(std::move(s->conn));
  }
}

// A merged row (text values, as the shards sent them) as the binary row one
// server would send for a COM_STMT_EXECUTE: every value is converted back to
// its column's binary type. A value that does not convert is an error, never
// a silently altered row.
std::expected<void, std::string> encodeBinaryFromText(const std::vector<std::optional<std::string>>& row,
                                                      std::span<const protocol::ColumnDefinition41> columns,
                                                      std::span<const protocol::BinaryType> types,
                                                      protocol::Bytes& out) {
  std::vector<protocol::BinaryValue> values;
  values.reserve(row.size());
  for (size_t c = 0; c < row.size() && c < columns.size(); ++c) {
    std::optional<std::string_view> text;
    if (row[c]) text = std::string_view(*row[c]);
    auto v = protocol::fromText(text, columns[c]);
    if (!v) {
      return std::unexpected(fmt::format("shardproxy: merged value of column {} does not convert to its binary type",
                                         columns[c].name));
    }
    values.push_back(*v);
  }
  if (values.size() != types.size() || !protocol::encodeBinaryRow(values, types, out)) {
    return std::unexpected(std::string("shardproxy: merged row does not match its binary result columns"));
  }
  return {};
}

// scatter.max_merge_bytes_total is spent: counted, logged (rate-limited), and
// worded so the client knows that retrying later may work.
protocol::ErrPacket mergeMemoryRefusal(ProxyContext& context, uint64_t held) {
  context.refused_merge_memory.fetch_add(1, std::memory_order_relaxed);
  const auto& budget = context.merge_budget;
  noteAbuse(AbuseKind::kMergeMemory, fmt::format("{} of {} bytes in use", budget.used(), budget.total()));
  return client_error::make(client_error::kMergeMemoryExhausted, fmt::format(
      "shardproxy: the statements spanning shards that run now hold all the merge memory "
      "(scatter.max_merge_bytes_total {} bytes; this one held {}); retry later, or narrow it (fewer groups, a key, "
      "a LIMIT)", budget.total(), held));
}

}  // namespace

awaitable<bool> ClientSession::runScatter(const routing::ScatterPlan& plan, bool binary_rows) {
  // The shards' warnings stay on their connections: the session's area is
  // empty unless the scatter fails (queueError records that).
  diagnostics_.onSuccess(0);
  if (pinned_ || inTransaction()) {
    queueError(reply_seq_, client_error::make(client_error::kCrossBackend,
        "shardproxy: a statement that spans shards cannot run inside a transaction or while the session holds "
        "connection-bound state; run it outside the transaction"));
    co_return co_await client_.flush();
  }
  if (auto shortfall = poolShortfall(worker_, plan.targets)) {
    queueError(reply_seq_, *shortfall);
    co_return co_await client_.flush();
  }
  // Borrowing all shards' connections is one step per worker (async_gate.hpp):
  // concurrent scatters never hold part of what they need while waiting.
  AsyncGate::Pass gate_pass = co_await worker_.multiShardGate().enter();
  std::vector<ShardStreamPtr> shards;
  shards.reserve(plan.targets.size());
  // Each shard query is one autocommitted read: with the session's
  // autocommit=0 it would open a transaction on every shard that nothing
  // ever ends (scatter statements are refused inside transactions anyway).
  SessionState shard_state = desired_;
  shard_state.variables.erase("autocommit");
  // 1. Borrow one connection per shard, bring it to the session's state, send.
  for (const auto& t : plan.targets) {
    auto s = std::make_unique<ShardStream>();
    s->target = &t;
    s->pool = worker_.pool(t.backend);
    if (!s->pool) {
      releaseScatter(shards);
      queueError(reply_seq_, client_error::make(client_error::kGeneric, "shardproxy: shard map names unknown backend " + t.backend));
      co_return co_await client_.flush();
    }
    auto conn = co_await borrow(*s->pool, false);  // sends the ERR itself on failure
    if (!conn) {
      releaseScatter(shards);
      co_return true;
    }
    auto synced = co_await conn->sync(shard_state);
    if (!synced) {
      if (synced.error().kind == BackendError::Kind::kServer) {
        queueError(reply_seq_, synced.error().toErrPacket());
      } else {
        queueError(reply_seq_, client_error::make(client_error::kBackendLost,
            fmt::format("shardproxy: shard {} failed: {}", shardLabel(t), synced.error().message)));
      }
      conn->markBroken();
      s->pool->release(std::move(conn));
      releaseScatter(shards);
      co_return co_await client_.flush();
    }
    s->conn = std::move(conn);
    protocol::Bytes payload;
    payload.reserve(t.sql.size() + 1);
    payload.push_back(static_cast<uint8_t>(protocol::Command::kQuery));
    payload.insert(payload.end(), t.sql.begin(), t.sql.end());
    s->conn->stream().append(payload, 0);
    shards.push_back(std::move(s));
  }
  gate_pass.release();
  const bool timed = record_.active;  // per-shard times for the slow-query log
  for (auto& s : shards) {
    if (timed) s->sent = std::chrono::steady_clock::now();
    if (!co_await s->conn->stream().flush()) s->conn->markBroken();
  }
  routing::ResultMerger merger(plan.merge, shards.size());
  // Every concurrent merge together (scatter.max_merge_bytes_total): freed when the statement ends.
  routing::MergeBudget::Reservation merge_memory(worker_.context().merge_budget);
  const auto& scatter_config = worker_.context().config.scatter;
  const size_t merge_cap = scatter_config.max_merge_bytes;
  const std::chrono::milliseconds timeout(scatter_config.shard_timeout_ms);
  // The sequence id of the next packet to the client: an error after the
  // result set header has started must continue its numbering.
  uint8_t seq = reply_seq_;
  auto fail = [&](size_t i, std::string why, client_error::Code code = client_error::kBackendLost) {
    queueError(seq, client_error::make(code,
        fmt::format("shardproxy: shard {} failed: {}", shardLabel(*shards[i]->target), why)));
  };
  auto failRead = [&](size_t i, ShardReadError e, std::string_view when) {
    if (e == ShardReadError::kTimeout) ++worker_.observer().metrics().shard_timeouts;
    fail(i, readFailure(e, timeout, when), e == ShardReadError::kTimeout ? client_error::kShardTimeout : client_error::kBackendLost);
  };
  // 2. Column definitions from every shard.
  for (size_t i = 0; i < shards.size(); ++i) {
    auto& s = *shards[i];
    s.tracker = std::make_unique<protocol::ResponseTracker>(protocol::ResponseKind::kQuery, s.conn->capabilities(),
                                                          s.conn->mariadbCapabilities());
    std::vector<protocol::ColumnDefinition41> columns;
    for (;;) {
      auto msg = co_await readShard(*s.conn, timeout, s.pool->config());
      if (!msg) {
        failRead(i, msg.error(), "");
        releaseScatter(shards);
        co_return co_await client_.flush();
      }
      auto ev = s.tracker->onPacket(msg->payload);
      if (!ev) {
        s.conn->markBroken();
        fail(i, "malformed response");
        releaseScatter(shards);
        co_return co_await client_.flush();
      }
      if (*ev == ResponseEvent::kErr) {
        auto err = protocol::decodeErrPacket(msg->payload);
        s.finished = true;
        protocol::ErrPacket out{err ? err->error_code : uint16_t(1105), err ? err->sql_state : std::string("HY000"),
                                fmt::format("shardproxy: shard {}: {}", shardLabel(*s.target), err ? err->message : "error")};
        queueError(reply_seq_, out);
        releaseScatter(shards);
        co_return co_await client_.flush();
      }
      if (*ev == ResponseEvent::kColumnDef) {
        auto def = protocol::decodeColumnDefinition41(msg->payload, s.conn->mariadbCapabilities());
        if (!def) {
          s.conn->markBroken();
          fail(i, "malformed column definition");
          releaseScatter(shards);
          co_return co_await client_.flush();
        }
        columns.push_back(std::move(*def));
      }
      if (*ev == ResponseEvent::kColumnsEof || *ev == ResponseEvent::kOk || *ev == ResponseEvent::kRowsEnd) break;
    }
    if (s.tracker->done()) {
      s.finished = true;
      if (timed) noteShardDone(s);
    }
    s.column_count = columns.size();
    if (auto r = merger.setColumns(i, std::move(columns)); !r) {
      fail(i, r.error(), client_error::kShardColumnsDiffer);
      releaseScatter(shards);
      co_return co_await client_.flush();
    }
    if (s.finished) merger.finishShard(i);
  }
  // 3. The result set header the client sees.
  const bool deprecate_eof = capabilities_ & protocol::cap::kDeprecateEof;
  protocol::Bytes scratch;
  const auto& out_columns = merger.outputColumns();
  protocol::encodeColumnCount(out_columns.size(), scratch);
  seq = client_.append(scratch, seq);
  for (const auto& c : out_columns) {
    scratch.clear();
    protocol::encode(c, scratch, mariadb_capabilities_);
    seq = client_.append(scratch, seq);
  }
  if (!deprecate_eof) {
    scratch.clear();
    protocol::encode(protocol::EofPacket{0, statusFlags()}, scratch);
    seq = client_.append(scratch, seq);
  }
  std::vector<protocol::BinaryType> binary_types;
  if (binary_rows) binary_types = protocol::binaryTypesOf(out_columns);
  // 4. Rows: pull from the shard the merger needs, push merged rows out.
  size_t next_any = 0;
  for (;;) {
    while (auto row = merger.nextRow()) {
      scratch.clear();
      if (!binary_rows) {
        protocol::encodeTextRow(*row, scratch);
      } else if (auto r = encodeBinaryFromText(*row, out_columns, binary_types, scratch); !r) {
        queueError(seq, client_error::make(client_error::kGeneric, r.error()));
        releaseScatter(shards);
        co_return co_await client_.flush();
      }
      seq = client_.append(scratch, seq);
      record_.onMergedRow(scratch.size());
      if (client_.pendingOutput() >= kClientFlushBytes && !co_await client_.flush()) {
        releaseScatter(shards);
        co_return false;
      }
    }
    if (merger.failure()) {
      queueError(seq, client_error::make(client_error::kNotSupported, *merger.failure()));
      releaseScatter(shards);
      co_return co_await client_.flush();
    }
    if (merger.done() || !merger.wantsMoreInput()) break;
    std::optional<size_t> pick = merger.needsRowFrom();
    if (!pick) {
      // Any shard will do: prefer one whose data is already buffered.
      for (size_t k = 0; k < shards.size() && !pick; ++k) {
        size_t i = (next_any + k) % shards.size();
        if (!shards[i]->finished && shards[i]->conn->stream().hasBufferedPacket()) pick = i;
      }
      for (size_t k = 0; k < shards.size() && !pick; ++k) {
        size_t i = (next_any + k) % shards.size();
        if (!shards[i]->finished) pick = i;
      }
      if (!pick) break;  // every shard finished
      next_any = *pick + 1;
    }
    auto& s = *shards[*pick];
    if (!s.conn->stream().hasBufferedPacket() && client_.pendingOutput() > 0 && !co_await client_.flush()) {
      releaseScatter(shards);
      co_return false;
    }
    // The row loop is hot: without a timeout (or with a packet already
    // buffered) read directly, sparing readShard's extra coroutine frame.
    std::expected<StreamMessage, ShardReadError> msg = std::unexpected(ShardReadError::kLost);
    if (timeout.count() == 0 || s.conn->stream().hasBufferedPacket()) {
      auto direct = co_await s.conn->stream().read();
      if (direct) msg = *direct;
      else s.conn->markBroken();
    } else {
      msg = co_await readShard(*s.conn, timeout, s.pool->config());
    }
    if (!msg) {
      failRead(*pick, msg.error(), " during the query");
      releaseScatter(shards);
      co_return co_await client_.flush();
    }
    auto ev = s.tracker->onPacket(msg->payload);
    if (ev && *ev == ResponseEvent::kErr) {
      // The server's own error mid-result (interrupted, lock wait, ...): its
      // code and SQLSTATE, as in the column phase, so clients react as to a server.
      s.finished = true;
      auto err = protocol::decodeErrPacket(msg->payload);
      queueError(seq, protocol::ErrPacket{err ? err->error_code : uint16_t(1105),
                                          err ? err->sql_state : std::string("HY000"),
                                          fmt::format("shardproxy: shard {}: {}", shardLabel(*s.target),
                                                      err ? err->message : "error")});
      releaseScatter(shards);
      co_return co_await client_.flush();
    }
    if (!ev) {
      s.conn->markBroken();
      fail(*pick, "malformed response");
      releaseScatter(shards);
      co_return co_await client_.flush();
    }
    if (*ev == ResponseEvent::kRow) {
      ++s.rows;
      auto row = protocol::decodeTextRow(msg->payload, s.column_count);
      if (!row) {
        s.conn->markBroken();
        fail(*pick, "malformed row");
        releaseScatter(shards);
        co_return co_await client_.flush();
      }
      if (auto r = merger.pushRow(*pick, *row); !r) {
        fail(*pick, r.error());
        releaseScatter(shards);
        co_return co_await client_.flush();
      }
      if (merger.bufferedBytes() > merge_cap) {
        queueError(seq, client_error::make(client_error::kGeneric, fmt::format(
            "shardproxy: the merge of this statement needs more than {} bytes (scatter.max_merge_bytes); narrow "
            "it (fewer groups, a key, a LIMIT)", merge_cap)));
        releaseScatter(shards);
        co_return co_await client_.flush();
      }
      if (!merge_memory.cover(merger.bufferedBytes())) {
        queueError(seq, mergeMemoryRefusal(worker_.context(), merge_memory.held()));
        merge_memory.release();
        releaseScatter(shards);
        co_return co_await client_.flush();
      }
    }
    if (s.tracker->done()) {
      s.finished = true;
      if (timed) noteShardDone(s);
      merger.finishShard(*pick);
    }
  }
  // 5. End of rows.
  scratch.clear();
  if (deprecate_eof) {
    protocol::OkPacket ok;
    ok.status_flags = statusFlags();
    protocol::encode(ok, capabilities_, scratch, protocol::kEofHeader);
  } else {
    protocol::encode(protocol::EofPacket{0, statusFlags()}, scratch);
  }
  client_.append(scratch, seq);
  if (record_.active) {
    for (const auto& s : shards) record_.shards.push_back({s->target->shard, s->target->backend, s->micros, s->rows});
    record_.merge_peak_bytes = merger.peakBufferedBytes();
  }
  releaseScatter(shards);
  co_return co_await client_.flush();
}

}  // namespace sp::proxy
