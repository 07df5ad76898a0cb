#include "proxy/move/move_catchup.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>

#include <fmt/format.h>

namespace sp::proxy {

namespace {

using protocol::BinlogRowsEvent;
using protocol::BinlogValue;
using Row = std::vector<BinlogValue>;

// A statement grows by rows up to about this size, then a new one starts
// (well under max_allowed_packet; one row bigger than this goes alone).
constexpr size_t kStatementBytes = 1 << 20;
// A DELETE's OR list stays small for the range optimizer
// (range_optimizer_max_mem_size), which would otherwise scan the table:
// a few hundred keys.
constexpr size_t kDeleteBytes = 32 << 10;

std::string quoteIdentifier(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out.push_back('`');
    out.push_back(c);
  }
  out.push_back('`');
  return out;
}

std::string tuple(const Row& row, const std::vector<size_t>& columns) {
  std::string out = "(";
  for (size_t k = 0; k < columns.size(); ++k) {
    if (k) out += ", ";
    out += protocol::binlogValueLiteral(row[columns[k]]);
  }
  out += ')';
  return out;
}

bool equalOn(const Row& a, const Row& b, const std::vector<size_t>& columns) {
  return std::all_of(columns.begin(), columns.end(), [&](size_t c) { return a[c] == b[c]; });
}

// Builds the target statements of one rows event: runs of REPLACE rows and
// runs of deleted keys, each flushed when the other kind comes or the
// statement is big enough, so the order of the source is kept.
class StatementBuilder {
 public:
  StatementBuilder(const std::string& target, const std::vector<std::string>& names, std::vector<size_t> pk)
      : target_(target), pk_(std::move(pk)) {
    std::string columns;
    for (size_t c = 0; c < names.size(); ++c) {
      all_.push_back(c);
      columns += (c ? ", " : "") + quoteIdentifier(names[c]);
    }
    replace_head_ = fmt::format("REPLACE INTO {} ({}) VALUES ", target_, columns);
    for (size_t k : pk_) key_names_.push_back(quoteIdentifier(names[k]));
    delete_head_ = fmt::format("DELETE FROM {} WHERE ", target_);
  }

  void replace(const Row& row) { add(Kind::kReplace, tuple(row, all_)); }
  // "(`a` = 1 AND `b` = 2)": MariaDB 10.11 scans the whole table (and locks
  // every row) for "(`a`, `b`) IN ((1, 2))" with one tuple; an OR of these
  // is a range for one key or many.
  void remove(const Row& row) {
    std::string match = "(";
    for (size_t k = 0; k < pk_.size(); ++k) {
      match += (k ? " AND " : "") + key_names_[k] + " = " + protocol::binlogValueLiteral(row[pk_[k]]);
    }
    add(Kind::kDelete, match + ")");
  }
  bool samePrimaryKey(const Row& a, const Row& b) const { return equalOn(a, b, pk_); }

  std::vector<std::string> finish() {
    flush();
    return std::move(out_);
  }

 private:
  enum class Kind { kNone, kReplace, kDelete };

  void add(Kind kind, const std::string& values) {
    if (kind != kind_ || current_.size() > (kind == Kind::kDelete ? kDeleteBytes : kStatementBytes)) {
      flush();
    }
    if (current_.empty()) {
      kind_ = kind;
      current_ = kind == Kind::kReplace ? replace_head_ : delete_head_;
    } else {
      current_ += kind == Kind::kReplace ? ", " : " OR ";
    }
    current_ += values;
  }
  void flush() {
    if (current_.empty()) return;
    out_.push_back(std::move(current_));
    current_.clear();
    kind_ = Kind::kNone;
  }

  const std::string& target_;
  std::vector<size_t> pk_;
  std::vector<size_t> all_;
  std::vector<std::string> key_names_;  // quoted, in key order
  std::string replace_head_, delete_head_;
  Kind kind_ = Kind::kNone;
  std::string current_;
  std::vector<std::string> out_;
};

Expected<std::vector<size_t>> primaryKeyIndexes(const BinlogRowsEvent& rows, const CatchupConfig& config) {
  std::vector<size_t> pk;
  if (config.primary_key.empty()) {
    pk.assign(rows.primary_key.begin(), rows.primary_key.end());
  } else {
    for (const auto& name : config.primary_key) {
      auto it = std::find(rows.column_names.begin(), rows.column_names.end(), name);
      if (it == rows.column_names.end()) {
        return std::unexpected(fmt::format("primary key column {} is not in the binlog's columns of {}.{}", name,
                                           rows.schema, rows.table));
      }
      pk.push_back(static_cast<size_t>(it - rows.column_names.begin()));
    }
  }
  if (pk.empty()) return std::unexpected(fmt::format("{}.{} has no primary key: cannot apply its changes idempotently",
                                                     rows.schema, rows.table));
  return pk;
}

// Where the rows (keys) of a statement of StatementBuilder begin, how more
// are joined, and how big the statement may grow.
struct StatementHead {
  size_t length;
  std::string_view separator;
  size_t limit;
};
std::optional<StatementHead> statementHead(std::string_view sql) {
  const bool replace = sql.starts_with("REPLACE INTO ");
  if (!replace && !sql.starts_with("DELETE FROM ")) return std::nullopt;
  const std::string_view marker = replace ? ") VALUES " : " WHERE ";
  size_t at = sql.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  return StatementHead{at + marker.size(), replace ? ", " : " OR ", replace ? kStatementBytes : kDeleteBytes};
}

// Appends the rows (keys) of `next` to `into` when both are the same kind of
// statement on the same table and columns: consecutive source transactions'
// REPLACEs become one multi-row REPLACE (rows apply in order, the last image
// of a key wins, as one by one), their DELETEs one DELETE.
bool mergeStatement(std::string& into, const std::string& next) {
  auto head = statementHead(next);
  if (!head || into.size() < head->length || into.compare(0, head->length, next, 0, head->length) != 0) return false;
  if (into.size() + next.size() - head->length > head->limit) return false;
  into += head->separator;
  into.append(next, head->length);
  return true;
}

bool isTransactionControl(std::string_view q, std::string_view word) {
  if (q.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(q[i])) != word[i]) return false;
  }
  return q.size() == word.size() || !std::isalnum(static_cast<unsigned char>(q[word.size()]));
}

bool containsNoCase(std::string_view text, std::string_view word) {
  auto it = std::search(text.begin(), text.end(), word.begin(), word.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != text.end();
}

}  // namespace

Expected<CatchupStatements> catchupStatements(const BinlogRowsEvent& rows, const CatchupConfig& config) {
  const auto& filter = config.filter;
  if (rows.schema != filter.schema || rows.table != filter.table) return CatchupStatements{};
  if (rows.column_names.empty()) {
    return std::unexpected(fmt::format("the binlog has no column names for {}.{}: the source needs "
                                       "binlog_row_metadata=FULL", rows.schema, rows.table));
  }
  if (!rows.full_images) {
    return std::unexpected(fmt::format("the binlog's row images of {}.{} are not whole rows: the source needs "
                                       "binlog_row_image=FULL", rows.schema, rows.table));
  }
  auto key = std::find(rows.column_names.begin(), rows.column_names.end(), filter.key_column);
  if (key == rows.column_names.end()) {
    return std::unexpected(fmt::format("key column {} is not in the binlog's columns of {}.{}", filter.key_column,
                                       rows.schema, rows.table));
  }
  const size_t key_index = static_cast<size_t>(key - rows.column_names.begin());
  auto pk = primaryKeyIndexes(rows, config);
  if (!pk) return std::unexpected(pk.error());
  for (const auto& row : rows.rows) {
    if (row.size() != rows.column_names.size()) return std::unexpected(std::string("row image of the wrong width"));
  }

  StatementBuilder out(config.target_table, rows.column_names, std::move(*pk));
  uint64_t changed = 0;
  auto matches = [&](const Row& row) { return filter.matches(row[key_index]); };
  switch (rows.kind) {
    case BinlogRowsEvent::Kind::kInsert:
      for (const auto& row : rows.rows) {
        if (matches(row)) {
          out.replace(row);
          ++changed;
        }
      }
      break;
    case BinlogRowsEvent::Kind::kDelete:
      for (const auto& row : rows.rows) {
        if (matches(row)) {
          out.remove(row);
          ++changed;
        }
      }
      break;
    case BinlogRowsEvent::Kind::kUpdate:
      if (rows.rows.size() % 2 != 0) return std::unexpected(std::string("update rows event with an odd image count"));
      for (size_t k = 0; k < rows.rows.size(); k += 2) {
        const Row& before = rows.rows[k];
        const Row& after = rows.rows[k + 1];
        const bool was = matches(before), is = matches(after);
        // The row leaves the target's key (or its primary key moves): its
        // old key must not stay behind.
        if (was && (!is || !out.samePrimaryKey(before, after))) out.remove(before);
        if (is) out.replace(after);
        changed += was || is;
      }
      break;
  }
  return CatchupStatements{out.finish(), changed};
}

namespace {
const std::string kUtc = "SET time_zone = '+00:00'";
const std::string kBegin = "START TRANSACTION";
const std::string kCommit = "COMMIT";
const std::string kRollback = "ROLLBACK";
}  // namespace

std::string catchupTransactionSql(const std::vector<std::string>& statements, bool with_time_zone) {
  size_t size = kUtc.size() + kBegin.size() + kCommit.size() + 3;
  for (const auto& s : statements) size += s.size() + 1;
  std::string sql;
  sql.reserve(size);
  if (with_time_zone) sql += kUtc + ";";
  sql += kBegin;
  for (const auto& s : statements) {
    sql += ';';
    sql += s;
  }
  sql += ';';
  sql += kCommit;
  return sql;
}

awaitable<Expected<void>> ConnectionCatchupTarget::run(std::string_view sql) {
  auto ok = co_await connection_.command(protocol::Command::kQuery, sql);
  if (!ok) {
    const auto& e = ok.error();
    co_return std::unexpected(e.kind == BackendError::Kind::kServer
                                  ? fmt::format("{} ({}): {}", e.code, e.sql_state, e.message)
                                  : e.message);
  }
  co_return Expected<void>{};
}

awaitable<Expected<void>> ConnectionCatchupTarget::applyTransaction(const std::vector<std::string>& statements) {
  std::optional<std::string> error;
  const bool multi = (connection_.flavour() & protocol::cap::kMultiStatements) != 0;
  size_t bytes = 0;
  for (const auto& s : statements) bytes += s.size() + 1;
  if (multi && bytes <= packet_bytes_) {
    // One packet: a statement that fails stops the rest (COMMIT included).
    const std::string sql = catchupTransactionSql(statements, !time_zone_set_);
    if (auto r = co_await run(sql); !r) error = r.error();
    else time_zone_set_ = true;
  } else {
    if (!time_zone_set_) {
      if (auto r = co_await run(kUtc); !r) co_return r;
      time_zone_set_ = true;
    }
    if (auto r = co_await run(kBegin); !r) error = r.error();
    for (size_t k = 0; k < statements.size() && !error; ++k) {
      if (auto r = co_await run(statements[k]); !r) error = r.error();
    }
    if (!error) {
      if (auto r = co_await run(kCommit); !r) error = r.error();
    }
  }
  if (error) {
    (void)co_await run(kRollback);
    co_return std::unexpected(*error);
  }
  co_return Expected<void>{};
}

MoveCatchup::MoveCatchup(BinlogEventSource& source, CatchupTarget& target, CatchupConfig config)
    : source_(source), target_(target), config_(std::move(config)) {
  progress_.applied = source_.position();
  read_ = progress_.applied;
}

std::optional<uint64_t> MoveCatchup::lagBytes(const protocol::BinlogPosition& source_end) const {
  if (source_end.file != progress_.applied.file) return std::nullopt;
  return source_end.pos > progress_.applied.pos ? source_end.pos - progress_.applied.pos : 0;
}

std::chrono::seconds MoveCatchup::lagSeconds() const {
  if (progress_.last_event_time == 0) return std::chrono::seconds(0);
  const auto now = static_cast<int64_t>(std::time(nullptr));
  return std::chrono::seconds(std::max<int64_t>(0, now - progress_.last_event_time));
}

Expected<void> MoveCatchup::collect(const protocol::BinlogRowsEvent& rows) {
  auto statements = catchupStatements(rows, config_);
  if (!statements) return std::unexpected(statements.error());
  pending_rows_ += statements->rows;
  for (auto& s : statements->sql) {
    pending_bytes_ += s.size() + 1;
    pending_.push_back(std::move(s));
  }
  return {};
}

void MoveCatchup::dropPending() {
  pending_.clear();
  pending_rows_ = 0;
  pending_bytes_ = 0;
}

awaitable<Expected<void>> MoveCatchup::endTransaction() {
  if (pending_.empty()) co_return Expected<void>{};
  // A transaction that would push the batch past its bytes goes in the next one.
  if (!batch_.empty() && batch_bytes_ + pending_bytes_ > config_.batch_bytes) {
    if (auto r = co_await flush(); !r) co_return r;
  }
  for (auto& s : pending_) {
    if (batch_.empty() || !mergeStatement(batch_.back(), s)) batch_.push_back(std::move(s));
  }
  batch_rows_ += pending_rows_;
  batch_bytes_ += pending_bytes_;
  ++batch_transactions_;
  dropPending();
  co_return Expected<void>{};
}

awaitable<Expected<void>> MoveCatchup::flush() {
  if (!batch_.empty()) {
    auto r = co_await target_.applyTransaction(batch_);
    const uint64_t rows = batch_rows_, transactions = batch_transactions_;
    batch_.clear();
    batch_rows_ = batch_transactions_ = 0;
    batch_bytes_ = 0;
    if (!r) co_return std::unexpected("catch-up target: " + r.error());
    progress_.rows_applied += rows;
    progress_.transactions_applied += transactions;
    ++progress_.batches_applied;
  }
  // The batch held every matching row up to read_ (the end of the last whole
  // source transaction read, which may be the transaction just added).
  progress_.applied = read_;
  co_return Expected<void>{};
}

awaitable<Expected<void>> MoveCatchup::step() {
  auto event = co_await source_.next();
  if (!event) co_return std::unexpected(event.error());
  ++progress_.events;
  if (event->header.timestamp != 0 && !std::holds_alternative<protocol::BinlogHeartbeatEvent>(event->body)) {
    progress_.last_event_time = event->header.timestamp;
  }
  bool commits = false, ends_group = false;
  const bool heartbeat = std::holds_alternative<protocol::BinlogHeartbeatEvent>(event->body);
  if (const auto* rows = std::get_if<protocol::BinlogRowsEvent>(&event->body)) {
    if (auto r = collect(*rows); !r) co_return std::unexpected(r.error());
  } else if (std::holds_alternative<protocol::BinlogCommitEvent>(event->body)) {
    commits = true;
  } else if (const auto* gtid = std::get_if<protocol::BinlogGtidEvent>(&event->body)) {
    if (!pending_.empty()) co_return std::unexpected(std::string("binlog: a new event group began before the last one committed"));
    in_group_ = !(gtid->gtid.flags & protocol::GtidEvent::kStandalone);
  } else if (const auto* query = std::get_if<protocol::BinlogQueryEvent>(&event->body)) {
    if (isTransactionControl(query->query, "BEGIN")) {
      in_group_ = true;
    } else if (isTransactionControl(query->query, "COMMIT")) {
      commits = true;  // a group of a non-transactional engine ends so
    } else if (isTransactionControl(query->query, "ROLLBACK")) {
      dropPending();
      ends_group = true;
    } else if (!isTransactionControl(query->query, "SAVEPOINT")) {
      // DDL (its own group). One that names the moving table changes what
      // the copy holds: the move must start over.
      if (containsNoCase(query->query, config_.filter.table)) {
        co_return std::unexpected(fmt::format("DDL on {}.{} during catch-up: {}", config_.filter.schema,
                                              config_.filter.table, query->query.substr(0, 200)));
      }
      ends_group = true;
    }
  }
  // read_ still ends the last whole transaction here: a batch sent because
  // this one does not fit is applied up to there.
  if (commits) {
    if (auto r = co_await endTransaction(); !r) co_return r;
  }
  if (commits || ends_group) in_group_ = false;
  if (in_group_) co_return Expected<void>{};
  read_ = event->end;
  const bool full = batch_transactions_ >= config_.batch_transactions || batch_bytes_ >= config_.batch_bytes;
  if (batch_.empty() || full || heartbeat) co_return co_await flush();
  co_return Expected<void>{};
}

awaitable<Expected<void>> MoveCatchup::runUntil(const protocol::BinlogPosition& stop_ref) {
  const protocol::BinlogPosition stop = stop_ref;
  while (in_group_ || protocol::binlogBefore(read_, stop)) {
    if (auto r = co_await step(); !r) co_return r;
  }
  co_return co_await flush();
}

awaitable<Expected<void>> MoveCatchup::runFollowing() {
  while (!stop_requested_.load()) {
    if (auto r = co_await step(); !r) co_return r;
  }
  co_return co_await flush();
}

}  // namespace sp::proxy
