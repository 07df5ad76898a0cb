#include "proxy/move/move_steps.hpp"

#include <boost/asio/steady_timer.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <chrono>

#include "conf/config.hpp"
#include "proxy/backend/binlog_stream.hpp"
#include "proxy/fleet/fleet_cutover.hpp"
#include "proxy/fleet/fleet_fences.hpp"
#include "proxy/core/background_gate.hpp"
#include "proxy/core/cutover_mark.hpp"
#include "proxy/move/move_catchup.hpp"
#include "proxy/maps/shard_map_manager.hpp"

namespace sp::proxy {

namespace {

using Clock = std::chrono::steady_clock;
using Unit = std::expected<void, std::string>;
using TextRow = std::vector<std::optional<std::string>>;
using protocol::ColumnType;

constexpr uint16_t kBinaryCharset = 63;
constexpr uint32_t kDeleteBatch = 5000;

std::string quoteName(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  return out + '`';
}

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + quoteName(n);
  return out;
}

bool numericType(ColumnType t) {
  switch (t) {
    case ColumnType::kDecimal: case ColumnType::kNewDecimal: case ColumnType::kTiny: case ColumnType::kShort:
    case ColumnType::kLong: case ColumnType::kFloat: case ColumnType::kDouble: case ColumnType::kLongLong:
    case ColumnType::kInt24: case ColumnType::kYear:
      return true;
    default:
      return false;
  }
}

// The literal that stores a text-protocol value back into a column of its type.
std::string literal(const std::optional<std::string>& v, const protocol::ColumnDefinition41& column) {
  if (!v) return "NULL";
  if (numericType(column.type)) return *v;
  if (column.character_set == kBinaryCharset || column.type == ColumnType::kBit) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out = "X'";
    for (unsigned char c : *v) {
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
    return out + "'";
  }
  std::string out = "'";
  for (char c : *v) {
    switch (c) {
      case '\0': out += "\\0"; break;
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\x1a': out += "\\Z"; break;
      default: out += c;
    }
  }
  return out + "'";
}

// The key columns compared with `cursor` (literals) in key order, op ">"
// or "<=", written out column by column: "(`a` > 1 OR (`a` = 1 AND `b` > 2))".
// MariaDB reads the row form "(`a`, `b`) > (1, 2)" by scanning the index from
// its start (EXPLAIN: type index), which made each copy batch slower than the
// last; this form is a range.
std::string keyAfter(const std::vector<std::string>& pk, const std::vector<std::string>& cursor, std::string_view op) {
  const std::string_view strict = op == ">" ? ">" : "<";
  std::string out = "(";
  for (size_t i = 0; i < pk.size(); ++i) {
    out += i ? " OR (" : "(";
    for (size_t k = 0; k < i; ++k) out += quoteName(pk[k]) + " = " + cursor[k] + " AND ";
    out += fmt::format("{} {} {})", quoteName(pk[i]), i + 1 == pk.size() ? op : strict, cursor[i]);
  }
  return out + ")";
}

std::optional<protocol::BinlogPosition> parsePosition(const std::string& text) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  protocol::BinlogPosition p;
  p.file = text.substr(0, colon);
  auto digits = std::string_view(text).substr(colon + 1);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), p.pos);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return p;
}

std::string describe(const BackendError& e) {
  return e.kind == BackendError::Kind::kServer ? fmt::format("error {}: {}", e.code, e.message) : e.message;
}

std::optional<uint64_t> keyOf(const protocol::BinlogValue& v) {
  using K = protocol::BinlogValue::Kind;
  if (v.kind == K::kUInt) return v.u;
  if (v.kind == K::kInt && v.i >= 0) return static_cast<uint64_t>(v.i);
  return std::nullopt;
}

// One chunk's count and checksum, or its rows, from one side.
struct ChunkSum {
  std::string count, sum;
  bool operator==(const ChunkSum&) const = default;
};

class BackendMoveSteps final : public MoveSteps {
 public:
  BackendMoveSteps(ProxyContext& context, ShardMapManager& maps, routing::MovePlan plan, int64_t id)
      : context_(context), maps_(maps), plan_(std::move(plan)), id_(id), settings_(context.config().moves) {}
  ~BackendMoveSteps() override { closeAll(); }

  awaitable<Unit> prepareTarget() override;
  awaitable<std::expected<std::string, std::string>> copy(const std::function<void(uint64_t, double)>& progress,
                                                          const std::atomic<bool>& cancel) override;
  awaitable<Unit> startCatchup(const std::string& position) override;
  awaitable<std::expected<std::string, std::string>> sourceEnd() override;
  awaitable<Unit> catchUpTo(const std::string& position) override;
  CatchupFigures catchup() const override { return figures_; }
  awaitable<std::expected<VerifyOutcome, std::string>> verifyBeforeSwitch() override;
  awaitable<Unit> freezeTarget() override;
  awaitable<std::expected<uint64_t, std::string>> publish() override;
  awaitable<std::expected<VerifyOutcome, std::string>> verifyAfterSwitch() override;
  void stopCatchup() override;
  awaitable<std::expected<uint64_t, std::string>> deleteSourceBatch() override;
  awaitable<Unit> clearTarget() override;
  awaitable<Unit> fenceFleet() override;
  awaitable<std::string> finishFleetFence() override;
  void abandonFleetFence() override {
    if (fleet_) fleet_->abandon();
  }
  awaitable<void> sleep(std::chrono::milliseconds d) override {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(kNoThrow);
  }
  void setYieldNote(std::function<void(const std::string&)> note) override { yield_note_ = std::move(note); }

 private:
  using Conn = std::unique_ptr<BackendConnection>;

  // Before a batch: waits while the source's or the target's clients are
  // slow or their replicas behind (background.*).
  awaitable<void> yieldToClients() {
    bool waited = false;
    for (const std::string* backend : {&plan_.source_backend, &plan_.target_backend}) {
      auto ms = co_await yieldToForeground(context_.background, *backend, fmt::format("move {}", id_), yield_note_);
      waited = waited || ms.count() > 0;
    }
    if (waited && yield_note_) yield_note_("");
  }
  std::function<void(const std::string&)> yield_note_;

  // The backend's current primary (a SWITCHOVER may have changed it).
  std::optional<conf::BackendConfig> backend(const std::string& name) const { return currentPrimary(context_, name); }
  awaitable<std::expected<Conn, std::string>> connect(const std::string& name, bool replication = false,
                                                      uint32_t flavour = 0);
  awaitable<Unit> run(BackendConnection& c, std::string_view sql);
  awaitable<std::expected<BackendConnection::TextResult, std::string>> query(BackendConnection& c, std::string_view sql);
  awaitable<Unit> ensureLinks();
  awaitable<Unit> openFrozen();
  // The change stream's cut-over marks (proxy/core/cutover_mark.hpp): the
  // source's GTID, then the target's mark naming it.
  awaitable<std::expected<std::string, std::string>> markSource();
  awaitable<void> markTarget(const std::expected<std::string, std::string>& source_gtid);
  awaitable<Unit> readColumns();
  std::string predicate() const { return plan_.row_predicate.empty() ? "1" : plan_.row_predicate; }
  std::string checksumSql(const std::string& table, const std::string& range) const;
  std::string rowsSql(const std::string& table, const std::string& range) const;
  awaitable<std::expected<std::string, std::string>> snapshot(BackendConnection& c);
  awaitable<std::expected<VerifyOutcome, std::string>> compare(BackendConnection& a, const std::string& table_a,
                                                               BackendConnection& b, const std::string& table_b,
                                                               const std::optional<std::string>& catch_up_to);
  awaitable<std::expected<uint64_t, std::string>> deleteBatch(BackendConnection& c, const std::string& table);
  void noteLag(const protocol::BinlogPosition& end);
  void closeAll();

  ProxyContext& context_;
  ShardMapManager& maps_;
  routing::MovePlan plan_;
  int64_t id_;
  conf::MovesConfig settings_;
  std::vector<std::string> columns_;  // of the source table, in order
  std::vector<std::string> pk_;
  Conn source_;       // copy / verify snapshots, cleanup
  Conn target_;       // copy writes, verify reads, clear
  Conn status_;       // replication account: SHOW BINLOG STATUS
  Conn apply_;        // the catch-up's target session
  Conn frozen_;       // the target's snapshot taken at the switch
  std::unique_ptr<BinlogStream> stream_;
  std::unique_ptr<ConnectionCatchupTarget> catchup_target_;
  std::unique_ptr<MoveCatchup> catchup_;
  CatchupFigures figures_;
  std::unique_ptr<FleetCutover> fleet_;  // in a fleet: the cut-over attempt's fence
};

awaitable<std::expected<BackendMoveSteps::Conn, std::string>> BackendMoveSteps::connect(const std::string& name,
                                                                                       bool replication,
                                                                                       uint32_t flavour) {
  const auto config = backend(name);
  if (!config) co_return std::unexpected(fmt::format("backend {} is not in the configuration", name));
  conf::BackendConfig use = replication ? replicationBackend(*config) : *config;
  auto conn = co_await BackendConnection::open(use, flavour, context_.config().server.max_packet_bytes);
  if (!conn) co_return std::unexpected(fmt::format("backend {}: {}", name, conn.error().message));
  if (!replication) {
    // A move's writes (copy, catch-up, cleanup) are maintenance: flagged in the
    // binlog (LOG_EVENT_SKIP_REPLICATION_F) so the change stream drops them.
    if (auto ok = co_await run(**conn, kMaintenanceSessionSql); !ok) co_return std::unexpected(ok.error());
  }
  co_return std::move(*conn);
}

awaitable<Unit> BackendMoveSteps::run(BackendConnection& c, std::string_view sql) {
  auto r = co_await c.command(protocol::Command::kQuery, sql);
  if (!r) co_return std::unexpected(describe(r.error()) + " (" + std::string(sql.substr(0, 120)) + ")");
  co_return Unit{};
}

awaitable<std::expected<BackendConnection::TextResult, std::string>> BackendMoveSteps::query(BackendConnection& c,
                                                                                           std::string_view sql) {
  auto r = co_await c.queryResult(sql);
  if (!r) co_return std::unexpected(describe(r.error()) + " (" + std::string(sql.substr(0, 120)) + ")");
  co_return std::move(*r);
}

// Every connection reads and writes TIMESTAMPs in UTC: the copy's text
// values and the checksums must not depend on a session's time zone.
awaitable<Unit> BackendMoveSteps::ensureLinks() {
  for (auto* slot : {&source_, &target_}) {
    if (*slot && !(*slot)->broken()) continue;
    const std::string& name = slot == &source_ ? plan_.source_backend : plan_.target_backend;
    auto c = co_await connect(name);
    if (!c) co_return std::unexpected(c.error());
    if (auto r = co_await run(**c, "SET time_zone = '+00:00'"); !r) co_return r;
    *slot = std::move(*c);
  }
  co_return Unit{};
}

awaitable<Unit> BackendMoveSteps::readColumns() {
  if (!columns_.empty()) co_return Unit{};
  auto cols = co_await query(*source_, fmt::format("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE "
                                                   "TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{}' "
                                                   "ORDER BY ORDINAL_POSITION",
                                                   plan_.source_table));
  if (!cols) co_return std::unexpected(cols.error());
  for (auto& r : cols->rows) columns_.push_back(r[0].value_or(""));
  const auto config = backend(plan_.source_backend);
  auto pk = co_await primaryKeyColumns(*source_, config->database, plan_.source_table);
  if (!pk) co_return std::unexpected(pk.error());
  if (pk->empty() || columns_.empty()) {
    co_return std::unexpected(plan_.source_table + " on " + plan_.source_backend +
                              " has no primary key (or does not exist): a move copies and verifies by key");
  }
  pk_ = *pk;
  co_return Unit{};
}

awaitable<Unit> BackendMoveSteps::prepareTarget() {
  if (auto r = co_await ensureLinks(); !r) co_return r;
  if (auto r = co_await readColumns(); !r) co_return r;
  if (plan_.request.kind == routing::MoveKind::kShard) {
    // The physical table on the new backend: created like the source when absent.
    auto exists = co_await query(*target_, fmt::format("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA "
                                                       "= DATABASE() AND TABLE_NAME = '{}'",
                                                       plan_.target_table));
    if (!exists) co_return std::unexpected(exists.error());
    if (exists->rows.empty()) {
      auto ddl = co_await query(*source_, "SHOW CREATE TABLE " + quoteName(plan_.source_table));
      if (!ddl) co_return std::unexpected(ddl.error());
      if (ddl->rows.empty() || ddl->rows[0].size() < 2 || !ddl->rows[0][1]) {
        co_return std::unexpected("SHOW CREATE TABLE " + plan_.source_table + " returned nothing");
      }
      if (auto r = co_await run(*target_, *ddl->rows[0][1]); !r) co_return r;
    }
  }
  co_return co_await clearTarget();
}

awaitable<std::expected<std::string, std::string>> BackendMoveSteps::snapshot(BackendConnection& c) {
  if (auto r = co_await run(c, "START TRANSACTION WITH CONSISTENT SNAPSHOT"); !r) co_return std::unexpected(r.error());
  auto pos = co_await binlogSnapshotPosition(c);
  if (!pos) co_return std::unexpected(pos.error());
  co_return protocol::toString(*pos);
}

awaitable<std::expected<std::string, std::string>> BackendMoveSteps::copy(
    const std::function<void(uint64_t, double)>& progress, const std::atomic<bool>& cancel) {
  if (auto r = co_await ensureLinks(); !r) co_return std::unexpected(r.error());
  if (auto r = co_await readColumns(); !r) co_return std::unexpected(r.error());
  auto position = co_await snapshot(*source_);
  if (!position) co_return position;
  auto started = Clock::now();
  uint64_t rows = 0;
  std::vector<std::string> cursor;
  const std::string select = fmt::format("SELECT {} FROM {} WHERE {}", joinNames(columns_),
                                         quoteName(plan_.source_table), predicate());
  const std::string order = " ORDER BY " + joinNames(pk_) + " LIMIT " + std::to_string(settings_.batch_rows);
  std::vector<size_t> pk_index;
  for (const auto& k : pk_) {
    pk_index.push_back(static_cast<size_t>(std::find(columns_.begin(), columns_.end(), k) - columns_.begin()));
  }
  for (;;) {
    if (cancel.load()) break;
    co_await yieldToClients();
    if (cancel.load()) break;
    // Built before the co_await (GCC 12 mishandles conditional temporaries inside one).
    std::string sql = select;
    if (!cursor.empty()) sql += " AND " + keyAfter(pk_, cursor, ">");
    sql += order;
    auto batch = co_await query(*source_, sql);
    if (!batch) co_return std::unexpected(batch.error());
    if (batch->rows.empty()) break;
    std::string insert = fmt::format("REPLACE INTO {} ({}) VALUES ", quoteName(plan_.target_table), joinNames(columns_));
    for (size_t r = 0; r < batch->rows.size(); ++r) {
      insert += r ? ",(" : "(";
      for (size_t c = 0; c < batch->rows[r].size(); ++c) {
        insert += (c ? "," : "") + literal(batch->rows[r][c], batch->columns[c]);
      }
      insert += ")";
    }
    if (auto w = co_await run(*target_, insert); !w) co_return std::unexpected(w.error());
    cursor.clear();
    for (size_t i : pk_index) cursor.push_back(literal(batch->rows.back()[i], batch->columns[i]));
    rows += batch->rows.size();
    progress(rows, std::chrono::duration<double>(Clock::now() - started).count());
    if (batch->rows.size() < settings_.batch_rows) break;
    if (settings_.pause_ms) co_await sleep(std::chrono::milliseconds(settings_.pause_ms));
  }
  if (auto r = co_await run(*source_, "COMMIT"); !r) co_return std::unexpected(r.error());
  co_return *position;
}

awaitable<Unit> BackendMoveSteps::startCatchup(const std::string& position) {
  auto from = parsePosition(position);
  if (!from) co_return std::unexpected("bad binlog position '" + position + "'");
  // Multi-statements: a batch of source transactions is one packet.
  auto apply = co_await connect(plan_.target_backend, false, protocol::cap::kMultiStatements);
  if (!apply) co_return std::unexpected(apply.error());
  apply_ = std::move(*apply);
  auto status = co_await connect(plan_.source_backend, true);
  if (!status) co_return std::unexpected(status.error());
  status_ = std::move(*status);
  uint32_t server_id = settings_.replica_server_id + static_cast<uint32_t>(id_ % 100000);
  const conf::BackendConfig account = replicationBackend(*backend(plan_.source_backend));
  const BinlogStreamOptions options;
  auto stream = co_await BinlogStream::open(account, *from, server_id, options);
  if (!stream) co_return std::unexpected("binlog of " + plan_.source_backend + ": " + stream.error());
  stream_ = std::move(*stream);
  catchup_target_ = std::make_unique<ConnectionCatchupTarget>(*apply_, settings_.catchup_batch_bytes);
  CatchupConfig config;
  config.filter.schema = backend(plan_.source_backend)->database;
  config.filter.table = plan_.source_table;
  config.filter.key_column = plan_.key_column;
  config.filter.matches = [keys = plan_.keys](const protocol::BinlogValue& v) {
    auto k = keyOf(v);
    return k && keys.contains(*k);
  };
  config.target_table = quoteName(backend(plan_.target_backend)->database) + "." + quoteName(plan_.target_table);
  config.primary_key = pk_;
  config.batch_transactions = settings_.catchup_batch_transactions;
  config.batch_bytes = settings_.catchup_batch_bytes;
  catchup_ = std::make_unique<MoveCatchup>(*stream_, *catchup_target_, std::move(config));
  figures_.applied_position = position;
  co_return co_await openFrozen();
}

void BackendMoveSteps::noteLag(const protocol::BinlogPosition& end) {
  if (!catchup_) return;
  figures_.applied_position = protocol::toString(catchup_->progress().applied);
  if (catchup_->progress().applied.file.empty()) figures_.applied_position = "";
  figures_.rows_applied = catchup_->progress().rows_applied;
  auto lag = catchup_->lagBytes(end);
  figures_.lag_known = lag.has_value();
  figures_.lag_bytes = lag.value_or(end.pos);  // across a rotation: at least the new file's bytes
  figures_.lag_seconds = static_cast<double>(catchup_->lagSeconds().count());
}

awaitable<std::expected<std::string, std::string>> BackendMoveSteps::sourceEnd() {
  if (!status_) co_return std::unexpected(std::string("the catch-up is not running"));
  auto end = co_await binlogEndPosition(*status_);
  if (!end) co_return std::unexpected(end.error());
  noteLag(*end);
  co_return protocol::toString(*end);
}

awaitable<Unit> BackendMoveSteps::catchUpTo(const std::string& position) {
  auto stop = parsePosition(position);
  if (!stop) co_return std::unexpected("bad binlog position '" + position + "'");
  if (!catchup_) co_return std::unexpected(std::string("the catch-up is not running"));
  auto r = co_await catchup_->runUntil(*stop);
  noteLag(*stop);
  if (!r) co_return std::unexpected(r.error());
  co_return Unit{};
}

std::string BackendMoveSteps::checksumSql(const std::string& table, const std::string& range) const {
  std::string parts;
  for (const auto& c : columns_) parts += fmt::format(", ISNULL({0}), {0}", quoteName(c));
  return fmt::format("SELECT COUNT(*), COALESCE(BIT_XOR(CRC32(CONCAT_WS('|'{}))), 0) FROM {} WHERE {}{}", parts,
                     quoteName(table), predicate(), range);
}

std::string BackendMoveSteps::rowsSql(const std::string& table, const std::string& range) const {
  return fmt::format("SELECT {} FROM {} WHERE {}{} ORDER BY {}", joinNames(columns_), quoteName(table), predicate(),
                     range, joinNames(pk_));
}

// Chunks of verify_chunk_rows rows by primary key, bounded by keys read on
// side `a`; each chunk's count and checksum on both sides; the rows of the
// chunks that differ compared one by one. `catch_up_to`: the catch-up
// applies up to this position between reading `a` and reading `b`.
awaitable<std::expected<VerifyOutcome, std::string>> BackendMoveSteps::compare(
    BackendConnection& a, const std::string& table_a, BackendConnection& b, const std::string& table_b,
    const std::optional<std::string>& catch_up_to) {
  auto bounds = co_await query(
      a, fmt::format("SELECT {0} FROM (SELECT {0}, ROW_NUMBER() OVER (ORDER BY {0}) AS sp_rn FROM {1} WHERE {2}) "
                     "AS sp_t WHERE sp_rn % {3} = 0 ORDER BY {0}",
                     joinNames(pk_), quoteName(table_a), predicate(), settings_.verify_chunk_rows));
  if (!bounds) co_return std::unexpected(bounds.error());
  std::vector<std::string> ranges;  // " AND key > lo AND key <= hi"
  std::vector<std::string> previous;
  for (size_t i = 0; i <= bounds->rows.size(); ++i) {
    std::string range;
    if (!previous.empty()) range += " AND " + keyAfter(pk_, previous, ">");
    if (i < bounds->rows.size()) {
      std::vector<std::string> hi;
      for (size_t c = 0; c < pk_.size(); ++c) hi.push_back(literal(bounds->rows[i][c], bounds->columns[c]));
      range += " AND " + keyAfter(pk_, hi, "<=");
      previous = hi;
    }
    ranges.push_back(range);
  }
  std::vector<ChunkSum> sums_a;
  VerifyOutcome out;
  for (const auto& range : ranges) {
    auto s = co_await query(a, checksumSql(table_a, range));
    if (!s) co_return std::unexpected(s.error());
    sums_a.push_back({s->rows[0][0].value_or("0"), s->rows[0][1].value_or("0")});
    out.rows += std::stoull(sums_a.back().count);
  }
  if (catch_up_to) {
    if (auto r = co_await catchUpTo(*catch_up_to); !r) co_return std::unexpected(r.error());
  }
  out.chunks = ranges.size();
  for (size_t i = 0; i < ranges.size(); ++i) {
    auto s = co_await query(b, checksumSql(table_b, ranges[i]));
    if (!s) co_return std::unexpected(s.error());
    if (ChunkSum{s->rows[0][0].value_or("0"), s->rows[0][1].value_or("0")} == sums_a[i]) continue;
    ++out.differing_chunks;
    auto ra = co_await query(a, rowsSql(table_a, ranges[i]));
    auto rb = co_await query(b, rowsSql(table_b, ranges[i]));
    if (!ra || !rb) co_return std::unexpected(ra ? rb.error() : ra.error());
    size_t shown = 0;
    for (size_t r = 0; r < std::max(ra->rows.size(), rb->rows.size()) && shown < 3; ++r) {
      const TextRow* x = r < ra->rows.size() ? &ra->rows[r] : nullptr;
      const TextRow* y = r < rb->rows.size() ? &rb->rows[r] : nullptr;
      if (x && y && *x == *y) continue;
      const TextRow* any = x ? x : y;
      std::string key;
      for (size_t c = 0; c < pk_.size(); ++c) {
        size_t idx = static_cast<size_t>(std::find(columns_.begin(), columns_.end(), pk_[c]) - columns_.begin());
        key += (c ? "," : "") + (*any)[idx].value_or("NULL");
      }
      out.detail += fmt::format("{}({}) {}", shown ? "; " : "", key, !x ? "only on the target" : !y ? "only on the source" : "differs");
      ++shown;
    }
  }
  out.equal = out.differing_chunks == 0;
  co_return out;
}

awaitable<std::expected<VerifyOutcome, std::string>> BackendMoveSteps::verifyBeforeSwitch() {
  if (auto r = co_await ensureLinks(); !r) co_return std::unexpected(r.error());
  auto position = co_await snapshot(*source_);
  if (!position) co_return std::unexpected(position.error());
  const std::optional<std::string> catch_up_to = *position;
  auto out = co_await compare(*source_, plan_.source_table, *target_, plan_.target_table, catch_up_to);
  co_await run(*source_, "COMMIT");
  co_return out;
}

// The connection is opened before the cut-over (openFrozen): under the
// hold only the snapshot is taken, one round trip.
awaitable<Unit> BackendMoveSteps::openFrozen() {
  if (frozen_ && !frozen_->broken()) co_return Unit{};
  auto c = co_await connect(plan_.target_backend);
  if (!c) co_return std::unexpected(c.error());
  frozen_ = std::move(*c);
  co_return co_await run(*frozen_, "SET time_zone = '+00:00'");
}

awaitable<Unit> BackendMoveSteps::freezeTarget() {
  if (auto r = co_await openFrozen(); !r) co_return r;
  co_return co_await run(*frozen_, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
}

awaitable<std::expected<uint64_t, std::string>> BackendMoveSteps::publish() {
  // First (before the map in force is read, so that the round trips do not
  // widen the window in which another publish can intervene).
  const auto source_gtid = co_await markSource();
  // Planned again against the map in force: a reload since the move began
  // must not be undone, and the move must still mean the same.
  // Read and published under the manager's lock: another move's cut-over
  // between the two would otherwise leave both planning the same version.
  std::vector<std::string> names;
  for (const auto& b : context_.config().backends) names.push_back(b.name);
  auto derive = [&](const routing::CompiledShardMap& map) -> std::expected<std::string, std::string> {
    auto again = routing::planMove(map, plan_.request, names);
    if (!again) return std::unexpected("the map in force no longer allows the move: " + again.error().message);
    if (again->source_table != plan_.source_table || again->source_backend != plan_.source_backend ||
        again->target_table != plan_.target_table || again->target_backend != plan_.target_backend) {
      return std::unexpected(std::string("the map in force changed the move's source or target since it began"));
    }
    return std::move(again->new_map_yaml);
  };
  auto out = maps_.publishDerived(derive, fmt::format("move:{}", id_),
                                  fmt::format("move {}: {}", id_, routing::describeMove(plan_.request)),
                                  fleet_ ? fleet_->guard() : nullptr);
  if (out.verdict != SwapVerdict::kApply) {
    std::string why = out.message;
    for (const auto& p : out.problems) why += "; " + p;
    co_return std::unexpected(why);
  }
  co_await markTarget(source_gtid);
  co_return out.new_version;
}

awaitable<std::expected<std::string, std::string>> BackendMoveSteps::markSource() {
  if (auto r = co_await ensureLinks(); !r) co_return std::unexpected(r.error());
  if (auto r = co_await run(*source_, cutoverSourceMarkSql()); !r) co_return std::unexpected(r.error());
  auto gtid = co_await source_->queryRows("SELECT @@last_gtid");
  if (!gtid || gtid->size() != 1 || gtid->front().size() != 1 || !gtid->front()[0] || gtid->front()[0]->empty()) {
    co_return std::unexpected(std::string("cannot read the source mark's @@last_gtid"));
  }
  co_return *gtid->front()[0];
}

awaitable<void> BackendMoveSteps::markTarget(const std::expected<std::string, std::string>& source_gtid) {
  std::expected<void, std::string> done = std::unexpected(source_gtid ? std::string() : source_gtid.error());
  if (source_gtid) done = co_await run(*target_, cutoverTargetMarkSql(plan_.source_backend, *source_gtid));
  if (!done) {
    spdlog::warn("move {}: no cut-over mark for the change stream ({}): a stream may send a moved key's first "
                 "changes on {} before its last ones on {}", id_, done.error(), plan_.target_backend,
                 plan_.source_backend);
  }
}

awaitable<Unit> BackendMoveSteps::fenceFleet() {
  if (!context_.config().fleet) co_return Unit{};
  fleet_ = std::make_unique<FleetCutover>(context_, fenceKeysOf(plan_.keys, plan_.source_table),
                                          fmt::format("{} move {}", context_.config().fleet->name, id_));
  co_return co_await fleet_->fence();
}

awaitable<std::string> BackendMoveSteps::finishFleetFence() {
  if (!fleet_) co_return std::string();
  std::string note = co_await fleet_->finish(maps_.fleetRevision());
  fleet_.reset();
  co_return note;
}

awaitable<std::expected<VerifyOutcome, std::string>> BackendMoveSteps::verifyAfterSwitch() {
  if (!frozen_) co_return std::unexpected(std::string("no snapshot of the target from the switch"));
  if (auto r = co_await ensureLinks(); !r) co_return std::unexpected(r.error());
  const std::optional<std::string> no_catch_up;  // an lvalue: GCC 12 destroys coroutine temporaries twice
  auto out = co_await compare(*source_, plan_.source_table, *frozen_, plan_.target_table, no_catch_up);
  co_await run(*frozen_, "COMMIT");
  frozen_->stream().close();
  frozen_.reset();
  co_return out;
}

void BackendMoveSteps::stopCatchup() {
  catchup_.reset();
  catchup_target_.reset();
  if (stream_) stream_->close();
  stream_.reset();
  for (auto* c : {&apply_, &status_}) {
    if (*c) (*c)->stream().close();
    c->reset();
  }
}

void BackendMoveSteps::closeAll() {
  stopCatchup();
  for (auto* c : {&source_, &target_, &frozen_}) {
    if (*c) (*c)->stream().close();
    c->reset();
  }
}

awaitable<std::expected<uint64_t, std::string>> BackendMoveSteps::deleteBatch(BackendConnection& c,
                                                                             const std::string& table) {
  auto r = co_await c.command(protocol::Command::kQuery, fmt::format("DELETE FROM {} WHERE {} LIMIT {}",
                                                                     quoteName(table), predicate(), kDeleteBatch));
  if (!r) co_return std::unexpected(describe(r.error()));
  co_return r->affected_rows;
}

awaitable<std::expected<uint64_t, std::string>> BackendMoveSteps::deleteSourceBatch() {
  if (auto r = co_await ensureLinks(); !r) co_return std::unexpected(r.error());
  co_await yieldToClients();
  co_return co_await deleteBatch(*source_, plan_.source_table);
}

awaitable<Unit> BackendMoveSteps::clearTarget() {
  if (auto r = co_await ensureLinks(); !r) co_return r;
  for (;;) {
    auto n = co_await deleteBatch(*target_, plan_.target_table);
    if (!n) co_return std::unexpected(n.error());
    if (*n < kDeleteBatch) co_return Unit{};
  }
}

}  // namespace

std::unique_ptr<MoveSteps> makeBackendMoveSteps(ProxyContext& context, ShardMapManager& maps, routing::MovePlan plan,
                                                int64_t move_id) {
  return std::make_unique<BackendMoveSteps>(context, maps, std::move(plan), move_id);
}

}  // namespace sp::proxy
