#include "proxy/changes/change_assembler.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "proxy/core/cutover_mark.hpp"

namespace sp::proxy::changes {

namespace {

using protocol::BinlogRowsEvent;

bool startsWithWord(std::string_view q, std::string_view word) {
  if (q.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(q[i])) != word[i]) return false;
  }
  return q.size() == word.size() || !std::isalnum(static_cast<unsigned char>(q[word.size()]));
}

}  // namespace

bool waitIsOver(const WaitFor& wait, const ChangePosition& emitted) {
  auto it = emitted.backends.find(wait.backend);
  return it == emitted.backends.end() || it->second.covers(wait.gtid);
}

std::optional<ChangeTransaction> ChangeAssembler::finish(uint32_t timestamp) {
  open_ = false;
  standalone_ = false;
  current_.timestamp = timestamp;
  current_.backend = backend_;
  ChangeTransaction out = std::move(current_);
  current_ = ChangeTransaction{};
  return out;
}

std::expected<void, std::string> ChangeAssembler::rows(const protocol::BinlogEvent& event,
                                                       const BinlogRowsEvent& r) {
  if (r.schema != schema_) return {};
  const LogicalTable* table = tables_.find(r.table);
  if (!table) return {};
  if (event.header.flags & kSkipReplicationFlag) {
    current_.skipped_rows += static_cast<uint32_t>(r.kind == BinlogRowsEvent::Kind::kUpdate ? r.rows.size() / 2 : r.rows.size());
    return {};
  }
  if (r.column_names.empty()) {
    return std::unexpected(fmt::format("the binlog of {} has no column names for {}.{}: the server needs "
                                       "binlog_row_metadata=FULL", backend_, r.schema, r.table));
  }
  if (!r.full_images) {
    return std::unexpected(fmt::format("the binlog of {} has partial row images of {}.{}: the server needs "
                                       "binlog_row_image=FULL", backend_, r.schema, r.table));
  }
  auto key = std::find(r.column_names.begin(), r.column_names.end(), table->key_column);
  if (key == r.column_names.end()) {
    return std::unexpected(fmt::format("{}.{} on {} has no column {}", r.schema, r.table, backend_, table->key_column));
  }
  if (!last_columns_ || *last_columns_ != r.column_names) {
    last_columns_ = std::make_shared<const std::vector<std::string>>(r.column_names);
  }
  const bool update = r.kind == BinlogRowsEvent::Kind::kUpdate;
  const size_t changes = update ? r.rows.size() / 2 : r.rows.size();
  if (current_.rows.size() + changes > max_rows_) {
    return std::unexpected(fmt::format("a transaction of {} changes more than {} rows of streamed tables "
                                       "(changes.max_transaction_events)", backend_, max_rows_));
  }
  for (size_t i = 0; i < r.rows.size(); i += update ? 2 : 1) {
    ChangeRow row;
    row.table = table;
    row.key_index = static_cast<size_t>(key - r.column_names.begin());
    row.columns = last_columns_;
    switch (r.kind) {
      case BinlogRowsEvent::Kind::kInsert: row.op = ChangeRow::Op::kInsert; row.after = r.rows[i]; break;
      case BinlogRowsEvent::Kind::kDelete: row.op = ChangeRow::Op::kDelete; row.before = r.rows[i]; break;
      case BinlogRowsEvent::Kind::kUpdate:
        row.op = ChangeRow::Op::kUpdate;
        row.before = r.rows[i];
        row.after = r.rows[i + 1];
        break;
    }
    current_.rows.push_back(std::move(row));
  }
  return {};
}

std::expected<std::optional<ChangeTransaction>, std::string> ChangeAssembler::feed(const protocol::BinlogEvent& event) {
  using R = std::expected<std::optional<ChangeTransaction>, std::string>;
  if (const auto* g = std::get_if<protocol::BinlogGtidEvent>(&event.body)) {
    current_ = ChangeTransaction{};
    current_.gtid = StreamGtid{g->gtid.domain_id, event.header.server_id, g->gtid.seq_no};
    open_ = true;
    standalone_ = (g->gtid.flags & protocol::GtidEvent::kStandalone) != 0;
    return R{std::nullopt};
  }
  if (const auto* r = std::get_if<protocol::BinlogRowsEvent>(&event.body)) {
    if (auto ok = rows(event, *r); !ok) return std::unexpected(ok.error());
    return R{std::nullopt};
  }
  if (std::holds_alternative<protocol::BinlogCommitEvent>(event.body)) {
    if (!open_) return R{std::nullopt};
    return R{finish(event.header.timestamp)};
  }
  if (const auto* q = std::get_if<protocol::BinlogQueryEvent>(&event.body)) {
    if (startsWithWord(q->query, "BEGIN")) return R{std::nullopt};
    if (startsWithWord(q->query, "ROLLBACK")) {  // a non-transactional group rolled back: nothing happened
      current_.rows.clear();
      return open_ ? R{finish(event.header.timestamp)} : R{std::nullopt};
    }
    if (auto mark = parseCutoverMark(q->query)) {
      if (auto gtid = parseStreamGtid(mark->source_gtid)) current_.wait_for = WaitFor{mark->source_backend, *gtid};
    }
    // DDL (standalone): ends its group. A QUERY inside a transaction (a
    // statement-logged one) changes no streamed row we could decode.
    if (open_ && standalone_) return R{finish(event.header.timestamp)};
    return R{std::nullopt};
  }
  return R{std::nullopt};
}

}  // namespace sp::proxy::changes
