// ResultMerger: combines the result sets of a scatter plan's shards into the
// one result the client sees, as one server holding all rows would return
// it. No sockets: the proxy pushes each shard's column definitions and text
// rows as they arrive and pulls output rows; the merger says which shard it
// needs next (merge sort) and when it needs nothing more (LIMIT reached).
//
// Pipeline (MergeSpec, routing/merge/merge_spec.hpp):
//   row mode:       Concatenate | MergeSort(order_by) -> Distinct -> Limit/Offset -> Project
//   aggregate mode: Aggregate(group_by) -> Having -> OrderBy -> Limit/Offset -> Project
// Concatenate and MergeSort stream with memory bounded by the rows buffered
// per shard; Aggregate buffers one entry per group (plus the distinct values
// of COUNT/SUM(DISTINCT)) and emits after every shard finished.
#pragma once
#include <cstddef>
#include <deque>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "protocol/resultset.hpp"
#include "routing/merge/merge_compare.hpp"
#include "routing/merge/merge_spec.hpp"

namespace sp::routing {

using MergedRow = std::vector<std::optional<std::string>>;

class GroupAggregator;

class ResultMerger {
 public:
  ResultMerger(const MergeSpec& spec, size_t shard_count);
  ~ResultMerger();
  ResultMerger(ResultMerger&&) noexcept;
  ResultMerger& operator=(ResultMerger&&) noexcept;

  // The first result set's column definitions of `shard`; an error when the
  // shards disagree on the column count or it does not fit the spec.
  std::expected<void, std::string> setColumns(size_t shard, std::vector<protocol::ColumnDefinition41> columns);
  // Whether a shard's columns were set: outputColumns is valid from the
  // first setColumns on (shards run the same SQL shape; the first decides;
  // later shards can only turn string metadata into its materialized form,
  // so read outputColumns after every shard's setColumns).
  bool columnsReady() const;
  // What the client sees: helper columns dropped, names as the client wrote
  // them, aggregate types as the server reports them (AVG: DECIMAL with the
  // scale of SUM + 4).
  const std::vector<protocol::ColumnDefinition41>& outputColumns() const;

  // One text-protocol row of `shard` (after that shard's setColumns; other
  // shards may still be describing theirs). Values are copied.
  std::expected<void, std::string> pushRow(size_t shard, const protocol::TextRow& row);
  void finishShard(size_t shard);

  // The shard whose next row the merger needs before it can emit more (merge
  // sort), or nullopt when any shard will do or nothing more is needed.
  std::optional<size_t> needsRowFrom() const;
  // False once the LIMIT is satisfied: the proxy may stop reading shards.
  bool wantsMoreInput() const;
  // The next output row (values as text) when one is ready.
  std::optional<MergedRow> nextRow();
  // All input consumed (or the limit reached) and all output taken.
  bool done() const;
  // Why the merge failed (a computed column that cannot be evaluated
  // exactly); checked when nextRow() has nothing: the statement fails.
  const std::optional<std::string>& failure() const { return failure_; }
  // Bytes held in buffers and groups, for the per-query memory cap.
  size_t bufferedBytes() const;
  // The most bytes held at any time so far (what scatter.max_merge_bytes had to allow).
  size_t peakBufferedBytes() const { return peak_buffered_bytes_; }

 private:
  struct ShardState {
    bool columns_set = false;
    bool finished = false;
    std::deque<MergedRow> rows;     // merge sort: rows waiting for their turn
    std::deque<std::string> keys;   // their sort keys (appendSortKey), memcmp-ordered
  };

  void resolveColumns();
  void buildOutputColumns();        // from shard_columns_ (folded over the shards so far)
  bool allFinished() const;
  void pump();                       // moves rows through the row-mode pipeline
  void emit(MergedRow row);          // Distinct -> Limit/Offset -> Project
  bool limitReached() const;
  bool less(const MergedRow& a, const MergedRow& b) const;  // ORDER BY order (aggregate results)
  std::string sortKey(const MergedRow& row) const;
  void finishAggregate();

  MergeSpec spec_;
  std::vector<ShardState> shards_;
  std::vector<protocol::ColumnDefinition41> shard_columns_;  // first shard's, folded (foldShardColumn)
  std::vector<ValueClass> classes_;       // per shard column
  std::vector<uint32_t> visible_;         // shard/merged positions sent to the client
  std::vector<MergeSortKey> order_;       // resolved sort keys
  std::vector<protocol::ColumnDefinition41> output_columns_;
  std::deque<MergedRow> output_;
  std::deque<MergedRow> concat_;          // row mode without order: arrival order
  std::unordered_set<std::string> seen_;  // Distinct: keys of the rows already sent
  std::unique_ptr<GroupAggregator> aggregator_;
  bool aggregate_done_ = false;
  uint64_t skipped_ = 0;   // rows dropped by OFFSET
  uint64_t emitted_ = 0;   // rows kept by LIMIT
  size_t buffered_bytes_ = 0;
  size_t peak_buffered_bytes_ = 0;
  void notePeak() { if (buffered_bytes_ > peak_buffered_bytes_) peak_buffered_bytes_ = buffered_bytes_; }
  size_t columns_set_ = 0;
  std::optional<std::string> failure_;
};

}  // namespace sp::routing
