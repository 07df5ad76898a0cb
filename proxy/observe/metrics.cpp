#include "proxy/observe/metrics.hpp"

#include <algorithm>

namespace sp::proxy {

const std::array<double, 16> kLatencyBounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                               0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,     10};
const std::array<double, 12> kPoolWaitBounds = {0.00001, 0.0001, 0.0005, 0.001, 0.005, 0.01,
                                                0.05,    0.1,    0.5,    1,     5,     10};
const std::array<double, 8> kFanoutBounds = {1, 2, 4, 8, 16, 32, 64, 128};
const std::array<double, 10> kMergeBufferBounds = {1024,    4096,     16384,    65536,     262144,
                                                   1048576, 4194304, 16777216, 67108864, 268435456};

std::string_view planLabelName(PlanLabel label) {
  switch (label) {
    case PlanLabel::kRoute: return "route";
    case PlanLabel::kInPruned: return "in_pruned";
    case PlanLabel::kScatter: return "scatter";
    case PlanLabel::kSplitWrite: return "split_write";
    case PlanLabel::kPassthrough: return "passthrough";
    case PlanLabel::kRefused: return "refused";
    case PlanLabel::kAdmin: return "admin";
    case PlanLabel::kLocal: return "local";
  }
  return "local";
}

PlanLabel planLabelOf(const routing::Plan& plan) {
  using K = routing::PlanKind;
  switch (plan.kind) {
    case K::kRoute: return PlanLabel::kRoute;
    case K::kPassthrough: return PlanLabel::kPassthrough;
    case K::kRefused: return PlanLabel::kRefused;
    case K::kMultiWrite: return PlanLabel::kSplitWrite;
    case K::kMultiRoute:
    case K::kScatter: return plan.key_values.empty() ? PlanLabel::kScatter : PlanLabel::kInPruned;
  }
  return PlanLabel::kPassthrough;
}

void Histogram::observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  ++count_;
  sum_ += value;
}

void Histogram::add(const Histogram& other) {
  if (counts_.size() != other.counts_.size()) return;
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
}

void StatementRecord::begin(std::chrono::steady_clock::time_point now) {
  started = now;
  active = true;
  plan = PlanLabel::kLocal;
  table.clear();
  backends.clear();
  shard_names.clear();
  fanout = 0;
  sql = {};
  normalized.clear();
  error_code = 0;
  rows = 0;
  shards.clear();
  merge_bytes = 0;
  merge_peak_bytes = 0;
}

void StatementRecord::onPlan(const routing::Plan& p, std::string_view default_backend) {
  plan = planLabelOf(p);
  if (p.table) table.assign(p.table->name);
  else table.clear();
  backends.clear();
  shard_names.clear();
  const auto& targets = p.scatter ? p.scatter->targets : p.targets;
  for (const auto& t : targets) {
    if (std::find(backends.begin(), backends.end(), t.backend) == backends.end()) backends.push_back(t.backend);
    if (!t.shard.empty()) shard_names.push_back(t.shard);
  }
  if (backends.empty() && p.kind == routing::PlanKind::kPassthrough) backends.emplace_back(default_backend);
  const bool spans = p.kind == routing::PlanKind::kScatter || p.kind == routing::PlanKind::kMultiRoute ||
                     p.kind == routing::PlanKind::kMultiWrite;
  fanout = spans ? static_cast<uint32_t>(targets.size()) : 0;
}

std::array<Histogram, kPlanLabelCount> WorkerMetrics::makeLatency() {
  std::array<Histogram, kPlanLabelCount> out;
  for (auto& h : out) h = Histogram(kLatencyBounds);
  return out;
}

WorkerMetrics::TableCounters& WorkerMetrics::table(std::string_view name) {
  for (auto& t : tables) {
    if (t.table == name) return t;
  }
  tables.push_back(TableCounters{std::string(name), {}});
  return tables.back();
}

WorkerMetrics::ShardCounters& WorkerMetrics::shard(TableCounters& t, std::string_view name) {
  auto it = t.shards.find(name);
  if (it == t.shards.end()) it = t.shards.emplace(std::string(name), ShardCounters{}).first;
  return it->second;
}

WorkerMetrics::BackendCounters& WorkerMetrics::backend(std::string_view name) {
  for (auto& b : backends) {
    if (b.backend == name) return b;
  }
  backends.push_back(BackendCounters{std::string(name)});
  return backends.back();
}

void WorkerMetrics::record(const StatementRecord& r, double seconds) {
  const auto plan = static_cast<size_t>(r.plan);
  const bool failed = r.error_code != 0;
  auto& t = table(r.table);
  ++t.statements[plan][failed ? 1 : 0];
  latency[plan].observe(seconds);
  if (failed) {
    ++errors[r.error_code];
    if (r.plan == PlanLabel::kRefused) ++refusals[r.error_code];
  }
  for (const auto& b : r.backends) {
    auto& c = backend(b);
    ++c.statements;
    if (failed) ++c.errors;
    c.latency.observe(seconds);
  }
  if (!r.shards.empty()) {
    for (const auto& s : r.shards) backend(s.backend).rows += s.rows;
  } else if (r.backends.size() == 1) {
    backend(r.backends.front()).rows += r.rows;
  }
  // A scatter's timings list its shards in plan order: one lookup per shard
  // serves the statement and its rows.
  const bool same_order = r.shards.size() == r.shard_names.size();
  for (size_t i = 0; i < r.shard_names.size(); ++i) {
    auto& c = shard(t, r.shard_names[i]);
    ++c.statements;
    if (failed) ++c.errors;
    if (!same_order) continue;
    if (r.shards[i].shard == r.shard_names[i]) c.rows += r.shards[i].rows;
    else shard(t, r.shards[i].shard).rows += r.shards[i].rows;
  }
  if (!r.shards.empty() && !same_order) {
    for (const auto& s : r.shards) shard(t, s.shard).rows += s.rows;
  } else if (r.shards.empty() && r.shard_names.size() == 1) {
    shard(t, r.shard_names.front()).rows += r.rows;
  }
  if (r.fanout > 0) fanout.observe(static_cast<double>(r.fanout));
  if (r.plan == PlanLabel::kScatter || r.plan == PlanLabel::kInPruned) {  // merged by the scatter executor
    merge_rows += r.rows;
    merge_bytes += r.merge_bytes;
    merge_buffer.observe(static_cast<double>(r.merge_peak_bytes));
  }
}

void WorkerMetrics::addAdminCommands(uint64_t ok, uint64_t errors) {
  auto& counters = table("").statements[static_cast<size_t>(PlanLabel::kAdmin)];
  counters[0] += ok;
  counters[1] += errors;
}

void WorkerMetrics::add(const WorkerMetrics& o) {
  for (const auto& t : o.tables) {
    auto& mine = table(t.table);
    for (size_t p = 0; p < kPlanLabelCount; ++p) {
      mine.statements[p][0] += t.statements[p][0];
      mine.statements[p][1] += t.statements[p][1];
    }
    for (const auto& [name, c] : t.shards) {
      auto& m = shard(mine, name);
      m.statements += c.statements;
      m.errors += c.errors;
      m.rows += c.rows;
    }
  }
  for (const auto& b : o.backends) {
    auto& mine = backend(b.backend);
    mine.statements += b.statements;
    mine.errors += b.errors;
    mine.rows += b.rows;
    mine.latency.add(b.latency);
  }
  for (size_t p = 0; p < kPlanLabelCount; ++p) latency[p].add(o.latency[p]);
  for (auto [code, n] : o.errors) errors[code] += n;
  for (auto [code, n] : o.refusals) refusals[code] += n;
  fanout.add(o.fanout);
  merge_rows += o.merge_rows;
  merge_bytes += o.merge_bytes;
  merge_buffer.add(o.merge_buffer);
  kills += o.kills;
  shard_timeouts += o.shard_timeouts;
  slow_queries += o.slow_queries;
}

}  // namespace sp::proxy
