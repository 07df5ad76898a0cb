#include "routing/merge/merge.hpp"

#include <algorithm>

#include "routing/merge/compare_coerce.hpp"
#include "routing/merge/merge_aggregate.hpp"
#include "routing/merge/merge_metadata.hpp"

namespace sp::routing {
namespace {

size_t rowBytes(const MergedRow& row) {
  size_t n = 32;
  for (const auto& v : row) n += 24 + (v ? v->size() : 0);
  return n;
}

std::optional<std::string_view> view(const std::optional<std::string>& v) {
  if (!v) return std::nullopt;
  return std::string_view(*v);
}

bool holds(HavingOp op, int cmp) {
  switch (op) {
    case HavingOp::kEq: return cmp == 0;
    case HavingOp::kNe: return cmp != 0;
    case HavingOp::kLt: return cmp < 0;
    case HavingOp::kLe: return cmp <= 0;
    case HavingOp::kGt: return cmp > 0;
    case HavingOp::kGe: return cmp >= 0;
  }
  return false;
}

// AVG(x) from the metadata of SUM(x), as MariaDB derives both: SUM has the
// argument's precision + 22 digits, AVG the argument's precision + 4
// (div_precision_increment) and its scale + 4; the display length adds a
// sign (signed) and a point (scale > 0).
protocol::ColumnDefinition41 avgColumn(protocol::ColumnDefinition41 sum) {
  bool is_unsigned = (sum.flags & protocol::column_flag::kUnsigned) != 0;
  auto overhead = static_cast<uint32_t>((sum.decimals > 0) + !is_unsigned);
  uint32_t sum_precision = sum.column_length > overhead ? sum.column_length - overhead : 0;
  uint32_t precision = sum_precision > 22 ? sum_precision - 22 + 4 : sum_precision + 4;
  precision = std::min<uint32_t>(precision, 65);
  sum.decimals = static_cast<uint8_t>(std::min(sum.decimals + 4, 38));
  sum.column_length = precision + 1 + !is_unsigned;
  return sum;
}

}  // namespace

ResultMerger::ResultMerger(const MergeSpec& spec, size_t shard_count) : spec_(spec), shards_(shard_count) {}
ResultMerger::~ResultMerger() = default;
ResultMerger::ResultMerger(ResultMerger&&) noexcept = default;
ResultMerger& ResultMerger::operator=(ResultMerger&&) noexcept = default;

std::expected<void, std::string> ResultMerger::setColumns(size_t shard, std::vector<protocol::ColumnDefinition41> columns) {
  if (shard >= shards_.size()) return std::unexpected("merge: no shard #" + std::to_string(shard));
  if (shards_[shard].columns_set) return std::unexpected("merge: shard #" + std::to_string(shard) + " sent columns twice");
  if (columns_set_ > 0 && columns.size() != shard_columns_.size()) {
    return std::unexpected("merge: shard #" + std::to_string(shard) + " returned " + std::to_string(columns.size()) +
                           " columns, another shard " + std::to_string(shard_columns_.size()));
  }
  if (columns_set_ == 0) {
    size_t expected = spec_.columns.size();
    if (expected != 0 && columns.size() != expected) {
      return std::unexpected("merge: shard #" + std::to_string(shard) + " returned " + std::to_string(columns.size()) +
                             " columns, the plan expects " + std::to_string(expected));
    }
    if (expected == 0 && columns.size() <= spec_.helper_columns) {
      return std::unexpected("merge: shard #" + std::to_string(shard) + " returned too few columns");
    }
    shard_columns_ = std::move(columns);
  } else {
    for (size_t i = 0; i < columns.size(); ++i) {
      if (auto mismatch = shardColumnMismatch(i, shard_columns_[i], columns[i])) {
        return std::unexpected("merge: shard #" + std::to_string(shard) + ": " + *mismatch);
      }
      foldShardColumn(shard_columns_[i], columns[i]);
    }
  }
  shards_[shard].columns_set = true;
  // Every shard runs the same SQL shape: the first shard's metadata decides
  // the shape; the others agree on the count and may only show that the
  // server's plan materializes string results (merge_metadata.hpp).
  if (++columns_set_ == 1) resolveColumns();
  buildOutputColumns();
  return {};
}

bool ResultMerger::columnsReady() const { return columns_set_ > 0; }

void ResultMerger::resolveColumns() {
  size_t n = shard_columns_.size();
  if (spec_.columns.empty()) {  // row mode with `*`: all but the helpers, in order
    for (uint32_t i = 0; i < n; ++i) spec_.columns.push_back({MergeOp::kValue, i, 0, i + spec_.helper_columns < n, {}});
  }
  for (const auto& c : shard_columns_) classes_.push_back(classify(c));
  for (const auto& key : spec_.order_by) {
    uint32_t column = key.column >= MergeSpec::kFromEnd
                          ? static_cast<uint32_t>(n - spec_.helper_columns + (key.column - MergeSpec::kFromEnd))
                          : key.column;
    order_.push_back({std::min<uint32_t>(column, static_cast<uint32_t>(n - 1)), key.descending});
  }
  if (spec_.aggregate && order_.empty()) {
    // MariaDB returns groups in GROUP BY order when no ORDER BY is written.
    for (uint32_t g : spec_.group_by) order_.push_back({g, false});
  }
  for (uint32_t i = 0; i < spec_.columns.size(); ++i) {
    if (spec_.columns[i].visible) visible_.push_back(i);
  }
  if (spec_.aggregate) aggregator_ = std::make_unique<GroupAggregator>(spec_, shard_columns_);
}

void ResultMerger::buildOutputColumns() {
  bool materialized = sortsAfterGrouping(spec_);
  output_columns_.clear();
  for (uint32_t i : visible_) {
    const MergeColumn& c = spec_.columns[i];
    protocol::ColumnDefinition41 def = shard_columns_[c.source];
    if (materialized) def = materializedString(std::move(def));
    if (!c.name.empty()) def.name = c.name;
    if (c.op == MergeOp::kAvg && (def.type == protocol::ColumnType::kNewDecimal ||
                                  def.type == protocol::ColumnType::kDecimal)) {
      def = avgColumn(def);
    }
    output_columns_.push_back(std::move(def));
  }
}

const std::vector<protocol::ColumnDefinition41>& ResultMerger::outputColumns() const { return output_columns_; }

std::expected<void, std::string> ResultMerger::pushRow(size_t shard, const protocol::TextRow& row) {
  if (shard >= shards_.size() || !shards_[shard].columns_set) {
    return std::unexpected("merge: row from shard #" + std::to_string(shard) + " before its columns");
  }
  if (row.size() != shard_columns_.size()) {
    return std::unexpected("merge: shard #" + std::to_string(shard) + " sent a row of " + std::to_string(row.size()) +
                           " values, expected " + std::to_string(shard_columns_.size()));
  }
  if (limitReached()) return {};  // the proxy may still be draining: nothing more is needed
  MergedRow copy;
  copy.reserve(row.size());
  for (const auto& v : row) copy.push_back(v ? std::optional<std::string>(std::string(*v)) : std::nullopt);
  if (aggregator_) {
    buffered_bytes_ += aggregator_->add(std::move(copy));
    notePeak();
    return {};
  }
  buffered_bytes_ += rowBytes(copy);
  if (order_.empty()) {
    concat_.push_back(std::move(copy));
  } else {
    shards_[shard].keys.push_back(sortKey(copy));
    buffered_bytes_ += shards_[shard].keys.back().size();
    shards_[shard].rows.push_back(std::move(copy));
  }
  notePeak();
  pump();
  return {};
}

void ResultMerger::finishShard(size_t shard) {
  if (shard >= shards_.size()) return;
  shards_[shard].finished = true;
  if (aggregator_ && allFinished() && !aggregate_done_) finishAggregate();
  if (!aggregator_ && columnsReady()) pump();
}

bool ResultMerger::allFinished() const {
  return std::all_of(shards_.begin(), shards_.end(), [](const ShardState& s) { return s.finished; });
}

bool ResultMerger::limitReached() const { return spec_.limit && emitted_ >= *spec_.limit; }

std::string ResultMerger::sortKey(const MergedRow& row) const {
  std::string key;
  for (const auto& k : order_) appendSortKey(classes_[k.column], view(row[k.column]), k.descending, key);
  return key;
}

bool ResultMerger::less(const MergedRow& a, const MergedRow& b) const {
  for (const auto& key : order_) {
    int c = compareValues(classes_[key.column], view(a[key.column]), view(b[key.column]));
    if (c != 0) return key.descending ? c > 0 : c < 0;
  }
  return false;
}

// Concatenate: rows in arrival order. MergeSort: the smallest head among the
// shards, emitted only while every unfinished shard has a head (otherwise
// the missing shard might hold a smaller row); ties go to the lower shard.
void ResultMerger::pump() {
  while (!concat_.empty() && !limitReached()) {
    buffered_bytes_ -= std::min(buffered_bytes_, rowBytes(concat_.front()));
    emit(std::move(concat_.front()));
    concat_.pop_front();
  }
  if (order_.empty()) return;
  while (!limitReached()) {
    ShardState* best = nullptr;
    for (auto& s : shards_) {
      if (s.rows.empty()) {
        if (!s.finished) return;  // needsRowFrom() names it
        continue;
      }
      if (!best || s.keys.front() < best->keys.front()) best = &s;  // ties: the lower shard
    }
    if (!best) return;
    buffered_bytes_ -= std::min(buffered_bytes_, rowBytes(best->rows.front()) + best->keys.front().size());
    emit(std::move(best->rows.front()));
    best->rows.pop_front();
    best->keys.pop_front();
  }
}

void ResultMerger::emit(MergedRow row) {
  if (spec_.distinct) {
    std::string key;
    for (uint32_t i : visible_) {
      std::string part = groupKey(classes_[i], view(row[i]));
      key += std::to_string(part.size()) + ":" + part;
    }
    size_t size = key.size();
    if (!seen_.insert(std::move(key)).second) return;
    buffered_bytes_ += size + 32;
    notePeak();
  }
  if (skipped_ < spec_.offset) {
    ++skipped_;
    return;
  }
  if (limitReached()) return;
  ++emitted_;
  MergedRow out;
  out.reserve(visible_.size());
  for (uint32_t i : visible_) out.push_back(std::move(row[i]));
  output_.push_back(std::move(out));
}

void ResultMerger::finishAggregate() {
  aggregate_done_ = true;
  std::vector<MergedRow> rows = aggregator_->finish();
  if (aggregator_->failure()) {
    failure_ = aggregator_->failure();
    return;
  }
  std::erase_if(rows, [&](const MergedRow& row) {
    for (const auto& term : spec_.having) {
      if (!term.literal || !row[term.column]) return true;  // comparisons with NULL are never true
      // The server's coercions (a DATETIME against '2025-03-01', text against 5), not text order.
      int cmp = compareWithLiteral(classes_[term.column], *row[term.column], term.literal_type, *term.literal);
      if (!holds(term.op, cmp)) return true;
    }
    return false;
  });
  if (!order_.empty()) {
    std::stable_sort(rows.begin(), rows.end(), [&](const MergedRow& a, const MergedRow& b) { return less(a, b); });
  }
  buffered_bytes_ = 0;
  for (auto& row : rows) {
    if (limitReached()) break;
    emit(std::move(row));
  }
}

std::optional<size_t> ResultMerger::needsRowFrom() const {
  if (aggregator_ || order_.empty() || limitReached() || !columnsReady()) return std::nullopt;
  for (size_t i = 0; i < shards_.size(); ++i) {
    if (shards_[i].rows.empty() && !shards_[i].finished) return i;
  }
  return std::nullopt;
}

bool ResultMerger::wantsMoreInput() const { return !limitReached() && !allFinished(); }

std::optional<MergedRow> ResultMerger::nextRow() {
  if (output_.empty()) return std::nullopt;
  MergedRow row = std::move(output_.front());
  output_.pop_front();
  return row;
}

bool ResultMerger::done() const {
  if (!output_.empty()) return false;
  if (limitReached()) return true;
  if (!allFinished()) return false;
  if (aggregator_) return aggregate_done_;
  if (!concat_.empty()) return false;
  return std::all_of(shards_.begin(), shards_.end(), [](const ShardState& s) { return s.rows.empty(); });
}

size_t ResultMerger::bufferedBytes() const { return buffered_bytes_; }

}  // namespace sp::routing
