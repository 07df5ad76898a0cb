#include "proxy/exec/scatter_execution.hpp"

#include <fmt/format.h>

#include "protocol/binary_row.hpp"
#include "protocol/constants.hpp"
#include "protocol/resultset.hpp"
#include "proxy/net/client_errors.hpp"
#include "proxy/exec/shard_errors.hpp"
#include "routing/merge/merge.hpp"

namespace sp::proxy {

namespace {

using protocol::ResponseEvent;

// Flush to the client at least this often while merged rows pile up.
constexpr size_t kClientFlushBytes = 256 * 1024;

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

// The state of one execution: the shards, the merger, the client's sequence ids.
class Scatter {
 public:
  Scatter(std::span<ScatterShard> shards, const routing::MergeSpec& merge, ClientSink& client, uint8_t first_seq,
          const ScatterOptions& options)
      : shards_(shards), merger_(merge, shards.size()), client_(client), options_(options), seq_(first_seq) {
    outcome_.error_seq = first_seq;
  }

  awaitable<ScatterOutcome> run();

 private:
  awaitable<bool> readColumns(size_t i);
  void sendHeader();
  awaitable<bool> pumpRows();
  std::optional<size_t> pickShard();
  bool takeRow(size_t i, protocol::ByteView payload);
  void sendEnd();
  void noteDone(size_t i);
  ScatterOutcome finish() {
    outcome_.merge_peak_bytes = merger_.peakBufferedBytes();
    return outcome_;
  }
  bool fail(protocol::ErrPacket error) {
    outcome_.error = std::move(error);
    outcome_.error_seq = seq_;
    return false;
  }
  bool failRead(size_t i, ChannelError e, std::string_view when) {
    outcome_.shard_timed_out |= e == ChannelError::kTimeout;
    return fail(shardFailure(*shards_[i].target, e, options_.shard_timeout, when));
  }

  std::span<ScatterShard> shards_;
  routing::ResultMerger merger_;
  ClientSink& client_;
  const ScatterOptions& options_;
  // The sequence id of the next packet to the client: an error after the
  // result set header has started must continue its numbering.
  uint8_t seq_;
  std::vector<size_t> column_counts_;
  std::vector<protocol::BinaryType> binary_types_;
  protocol::Bytes scratch_;
  size_t next_any_ = 0;
  ScatterOutcome outcome_;
};

void Scatter::noteDone(size_t i) {
  auto& s = shards_[i];
  if (options_.timed) {
    s.micros = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - s.sent).count());
  }
  merger_.finishShard(i);
}

awaitable<ScatterOutcome> Scatter::run() {
  for (auto& s : shards_) s.channel->sendQuery(s.target->sql);
  for (auto& s : shards_) {
    if (options_.timed) s.sent = std::chrono::steady_clock::now();
    const bool sent = co_await s.channel->flush();
    (void)sent;  // a failed send shows as a lost connection when read
  }
  column_counts_.assign(shards_.size(), 0);
  for (size_t i = 0; i < shards_.size(); ++i) {
    const bool read = co_await readColumns(i);
    if (!read) co_return finish();
  }
  sendHeader();
  const bool pumped = co_await pumpRows();
  if (!pumped) co_return finish();
  sendEnd();
  co_return finish();
}

// 1. Column definitions from shard i (or its whole answer, when it has no rows).
awaitable<bool> Scatter::readColumns(size_t i) {
  auto& s = shards_[i];
  std::vector<protocol::ColumnDefinition41> columns;
  for (;;) {
    auto packet = co_await s.channel->next();
    if (!packet) co_return failRead(i, packet.error(), "");
    const auto ev = packet->event;
    if (ev == ResponseEvent::kErr) co_return fail(relabelShardError(*s.target, decodeServerError(packet->payload)));
    if (ev == ResponseEvent::kColumnDef) {
      auto def = protocol::decodeColumnDefinition41(packet->payload, s.channel->mariadbCapabilities());
      if (!def) {
        s.channel->markBroken();
        co_return fail(shardFailure(*s.target, "malformed column definition"));
      }
      columns.push_back(std::move(*def));
    }
    if (ev == ResponseEvent::kColumnsEof || ev == ResponseEvent::kOk || ev == ResponseEvent::kRowsEnd) break;
  }
  column_counts_[i] = columns.size();
  // Shards whose tables drifted apart (other names, count or types): 9005,
  // never one shard's values under another's labels.
  if (auto r = merger_.setColumns(i, std::move(columns)); !r) {
    co_return fail(shardFailure(*s.target, r.error(), client_error::kShardColumnsDiffer));
  }
  if (s.channel->done()) noteDone(i);
  co_return true;
}

// 2. The result set header the client sees.
void Scatter::sendHeader() {
  const auto& columns = merger_.outputColumns();
  scratch_.clear();
  protocol::encodeColumnCount(columns.size(), scratch_);
  seq_ = client_.append(scratch_, seq_);
  for (const auto& c : columns) {
    scratch_.clear();
    protocol::encode(c, scratch_, options_.client_mariadb_capabilities);
    seq_ = client_.append(scratch_, seq_);
  }
  if (!(options_.client_capabilities & protocol::cap::kDeprecateEof)) {
    scratch_.clear();
    protocol::encode(protocol::EofPacket{0, options_.status_flags}, scratch_);
    seq_ = client_.append(scratch_, seq_);
  }
  if (options_.binary_rows) binary_types_ = protocol::binaryTypesOf(columns);
}

// The shard to read next: the one the merger needs, else any unfinished one,
// preferring one whose data is already buffered.
std::optional<size_t> Scatter::pickShard() {
  if (auto needed = merger_.needsRowFrom()) return needed;
  std::optional<size_t> pick;
  for (size_t k = 0; k < shards_.size() && !pick; ++k) {
    size_t i = (next_any_ + k) % shards_.size();
    if (!shards_[i].channel->done() && shards_[i].channel->hasBufferedPacket()) pick = i;
  }
  for (size_t k = 0; k < shards_.size() && !pick; ++k) {
    size_t i = (next_any_ + k) % shards_.size();
    if (!shards_[i].channel->done()) pick = i;
  }
  if (pick) next_any_ = *pick + 1;
  return pick;
}

bool Scatter::takeRow(size_t i, protocol::ByteView payload) {
  auto& s = shards_[i];
  ++s.rows;
  auto row = protocol::decodeTextRow(payload, column_counts_[i]);
  if (!row) {
    s.channel->markBroken();
    return fail(shardFailure(*s.target, "malformed row"));
  }
  if (auto r = merger_.pushRow(i, *row); !r) return fail(shardFailure(*s.target, r.error()));
  if (merger_.bufferedBytes() > options_.max_merge_bytes) {
    return fail(client_error::make(client_error::kGeneric, fmt::format(
        "shardproxy: the merge of this statement needs more than {} bytes (scatter.max_merge_bytes); narrow "
        "it (fewer groups, a key, a LIMIT)", options_.max_merge_bytes)));
  }
  if (options_.merge_memory && !options_.merge_memory->cover(merger_.bufferedBytes())) {
    outcome_.merge_memory_exhausted = true;
    outcome_.error_seq = seq_;
    return false;
  }
  return true;
}

// 3. Rows: pull from the shard the merger needs, push merged rows out.
awaitable<bool> Scatter::pumpRows() {
  for (;;) {
    while (auto row = merger_.nextRow()) {
      scratch_.clear();
      if (!options_.binary_rows) {
        protocol::encodeTextRow(*row, scratch_);
      } else if (auto r = encodeBinaryFromText(*row, merger_.outputColumns(), binary_types_, scratch_); !r) {
        co_return fail(client_error::make(client_error::kGeneric, r.error()));
      }
      seq_ = client_.append(scratch_, seq_);
      ++outcome_.rows;
      outcome_.row_bytes += scratch_.size();
      if (client_.pendingOutput() >= kClientFlushBytes) {
        const bool sent = co_await client_.flush();
        if (!sent) {
          outcome_.client_failed = true;
          co_return false;
        }
      }
    }
    if (merger_.failure()) co_return fail(client_error::make(client_error::kNotSupported, *merger_.failure()));
    if (merger_.done() || !merger_.wantsMoreInput()) co_return true;
    auto pick = pickShard();
    if (!pick) co_return true;  // every shard finished
    auto& s = shards_[*pick];
    auto packet = s.channel->tryNext();
    if (!packet) {
      // About to wait for a shard: let the client have what is merged so far.
      if (client_.pendingOutput() > 0) {
        const bool sent = co_await client_.flush();
        if (!sent) {
          outcome_.client_failed = true;
          co_return false;
        }
      }
      auto waited = co_await s.channel->next();
      packet = std::move(waited);
    }
    if (!*packet) co_return failRead(*pick, packet->error(), " during the query");
    // The server's own error mid-result (interrupted, lock wait, ...): its
    // code and SQLSTATE, as in the column phase, so clients react as to a server.
    if ((*packet)->event == ResponseEvent::kErr) {
      co_return fail(relabelShardError(*s.target, decodeServerError((*packet)->payload)));
    }
    if ((*packet)->event == ResponseEvent::kRow && !takeRow(*pick, (*packet)->payload)) co_return false;
    if (s.channel->done()) noteDone(*pick);
  }
}

// 4. End of rows.
void Scatter::sendEnd() {
  scratch_.clear();
  if (options_.client_capabilities & protocol::cap::kDeprecateEof) {
    protocol::OkPacket ok;
    ok.status_flags = options_.status_flags;
    protocol::encode(ok, options_.client_capabilities, scratch_, protocol::kEofHeader);
  } else {
    protocol::encode(protocol::EofPacket{0, options_.status_flags}, scratch_);
  }
  client_.append(scratch_, seq_);
}

}  // namespace

awaitable<ScatterOutcome> executeScatter(std::span<ScatterShard> shards, const routing::MergeSpec& merge,
                                         ClientSink& client, uint8_t first_seq, const ScatterOptions& options) {
  Scatter scatter(shards, merge, client, first_seq, options);
  co_return co_await scatter.run();
}

}  // namespace sp::proxy
