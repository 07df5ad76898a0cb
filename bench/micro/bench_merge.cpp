// Micro-benchmarks of the scatter-gather merge (routing/merge/merge.hpp), per row:
// merge sort of 16 shards' sorted rows (the fan-out of an ORDER BY ... LIMIT
// without the shard key) and the aggregate merge of 16 shards' partial
// COUNTs grouped by a key (scatter_count with GROUP BY). items = input rows.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "protocol/resultset.hpp"
#include "routing/merge/merge.hpp"
#include "routing/merge/merge_spec.hpp"

namespace {

using sp::protocol::ColumnDefinition41;
using sp::protocol::ColumnType;
using sp::protocol::TextRow;
using sp::routing::MergeColumn;
using sp::routing::MergeOp;
using sp::routing::MergeSpec;
using sp::routing::ResultMerger;

constexpr size_t kShards = 16;

ColumnDefinition41 intColumn(const char* name) {
  ColumnDefinition41 c;
  c.schema = "im";
  c.table = "msg";
  c.name = name;
  c.org_name = name;
  c.character_set = 63;
  c.column_length = 20;
  c.type = ColumnType::kLongLong;
  return c;
}

MergeColumn valueColumn(uint32_t source) {
  MergeColumn c;
  c.op = MergeOp::kValue;
  c.source = source;
  return c;
}

// Each shard's rows as text: shard s holds seq = s, s + 16, s + 32, ...
std::vector<std::vector<std::vector<std::string>>> sortedShardRows(size_t rows_per_shard) {
  std::vector<std::vector<std::vector<std::string>>> shards(kShards);
  for (size_t s = 0; s < kShards; ++s) {
    for (size_t i = 0; i < rows_per_shard; ++i) {
      const size_t seq = s + i * kShards;
      shards[s].push_back({std::to_string(seq), std::to_string(900000000000ULL + seq)});
    }
  }
  return shards;
}

TextRow view(const std::vector<std::string>& row) {
  TextRow out;
  for (const auto& v : row) out.emplace_back(std::string_view(v));
  return out;
}

void BM_MergeSortPerRow(benchmark::State& state) {
  const size_t per_shard = static_cast<size_t>(state.range(0));
  const auto shards = sortedShardRows(per_shard);
  MergeSpec spec;
  spec.columns = {valueColumn(0), valueColumn(1)};
  spec.order_by = {{0, false}};
  const std::vector<ColumnDefinition41> columns{intColumn("seq"), intColumn("msg_id")};
  size_t out_rows = 0;
  size_t peak_buffered = 0;
  for (auto _ : state) {
    ResultMerger merger(spec, kShards);
    for (size_t s = 0; s < kShards; ++s) (void)merger.setColumns(s, columns);
    // Feed the way the proxy does: the shard the merger asks for, else any
    // shard that still has input.
    std::vector<size_t> next(kShards, 0);
    std::vector<bool> finished(kShards, false);
    out_rows = 0;
    while (!merger.done()) {
      while (auto row = merger.nextRow()) {
        benchmark::DoNotOptimize(row);
        ++out_rows;
      }
      if (merger.done()) break;
      std::optional<size_t> s = merger.needsRowFrom();
      for (size_t i = 0; !s && i < kShards; ++i) {
        if (!finished[i]) s = i;
      }
      if (!s || finished[*s]) break;  // nothing left to feed: the check below reports it
      if (next[*s] < per_shard) {
        (void)merger.pushRow(*s, view(shards[*s][next[*s]++]));
        peak_buffered = std::max(peak_buffered, merger.bufferedBytes());
      } else {
        merger.finishShard(*s);
        finished[*s] = true;
      }
    }
  }
  if (out_rows != kShards * per_shard) state.SkipWithError("merge sort lost rows");
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kShards * per_shard));
  // Memory held by the merge at its worst: stays at a few rows per shard.
  state.counters["peak_buffered_bytes"] = static_cast<double>(peak_buffered);
}
// 100000: the 16 streams of 100k rows (1.6M rows per iteration).
BENCHMARK(BM_MergeSortPerRow)->Arg(50)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

// SELECT msg_type, COUNT(*) ... GROUP BY msg_type over 16 shards: each shard
// sends one partial count per group.
void BM_AggregateMergePerRow(benchmark::State& state) {
  const size_t groups = static_cast<size_t>(state.range(0));
  MergeSpec spec;
  spec.aggregate = true;
  MergeColumn count;
  count.op = MergeOp::kCount;
  count.source = 1;
  spec.columns = {valueColumn(0), count};
  spec.group_by = {0};
  const std::vector<ColumnDefinition41> columns{intColumn("msg_type"), intColumn("COUNT(*)")};
  std::vector<std::vector<std::string>> rows;
  for (size_t g = 0; g < groups; ++g) rows.push_back({std::to_string(g), std::to_string(100 + g)});
  size_t out_rows = 0;
  for (auto _ : state) {
    ResultMerger merger(spec, kShards);
    for (size_t s = 0; s < kShards; ++s) (void)merger.setColumns(s, columns);
    for (size_t s = 0; s < kShards; ++s) {
      for (const auto& r : rows) (void)merger.pushRow(s, view(r));
      merger.finishShard(s);
    }
    out_rows = 0;
    while (auto row = merger.nextRow()) {
      benchmark::DoNotOptimize(row);
      ++out_rows;
    }
  }
  if (out_rows != groups) state.SkipWithError("aggregate merge lost groups");
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kShards * groups));
}
BENCHMARK(BM_AggregateMergePerRow)->Arg(1)->Arg(4)->Arg(1000);

}  // namespace

BENCHMARK_MAIN();
