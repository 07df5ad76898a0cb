#include "routing/merge/merge_aggregate.hpp"

#include <charconv>
#include <cstdlib>

#include "routing/merge/decimal.hpp"
#include "routing/merge/merge_compute.hpp"

namespace sp::routing {
namespace {

// MariaDB's div_precision_increment default: AVG and `/` add 4 decimals.
constexpr uint32_t kDivPrecisionIncrement = 4;
constexpr uint32_t kMaxDecimalScale = 38;

std::string formatDouble(double v) {
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

double parseDouble(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

uint64_t parseCount(const std::optional<std::string>& s) {
  if (!s) return 0;
  uint64_t v = 0;
  std::from_chars(s->data(), s->data() + s->size(), v);
  return v;
}

}  // namespace

std::string addValues(ValueClass cls, const std::string& a, const std::string& b) {
  if (cls != ValueClass::kFloat) {
    if (auto sum = decimal::add(a, b)) return *sum;
  }
  return formatDouble(parseDouble(a) + parseDouble(b));
}

GroupAggregator::GroupAggregator(const MergeSpec& spec, const std::vector<protocol::ColumnDefinition41>& shard_columns)
    : spec_(spec), columns_(shard_columns) {
  for (const auto& c : shard_columns) {
    classes_.push_back(classify(c));
    avg_scales_.push_back(std::min<uint32_t>(c.decimals + kDivPrecisionIncrement, kMaxDecimalScale));
  }
}

size_t GroupAggregator::add(MergedRow row) {
  std::string key;
  for (uint32_t g : spec_.group_by) {
    std::optional<std::string_view> v;
    if (row[g]) v = *row[g];
    std::string part = groupKey(classes_[g], v);
    key += std::to_string(part.size()) + ":" + part;
  }
  auto [it, inserted] = index_.try_emplace(key, groups_.size());
  if (!inserted) return merge(groups_[it->second], row);
  Group group;
  group.distinct.resize(spec_.columns.size());
  size_t bytes = key.size() + 64;
  for (size_t i = 0; i < spec_.columns.size(); ++i) {
    const MergeColumn& c = spec_.columns[i];
    if (c.op == MergeOp::kCountDistinct || c.op == MergeOp::kSumDistinct) {
      const auto& v = row[c.helper];
      if (v) {
        std::optional<std::string_view> view(*v);
        bytes += v->size() * 2 + 32;
        group.distinct[i].emplace(groupKey(classes_[c.helper], view), *v);
      }
    }
  }
  for (const auto& v : row) bytes += v ? v->size() + 8 : 8;
  group.values = std::move(row);
  groups_.push_back(std::move(group));
  return bytes;
}

size_t GroupAggregator::merge(Group& group, MergedRow& row) {
  size_t bytes = 0;
  for (size_t i = 0; i < spec_.columns.size(); ++i) {
    const MergeColumn& c = spec_.columns[i];
    auto& acc = group.values[i];
    auto& in = row[c.source];
    switch (c.op) {
      case MergeOp::kValue: break;  // first value of the group (a group key, or any value)
      case MergeOp::kComputed: break;  // evaluated in compute()
      case MergeOp::kCount:
      case MergeOp::kSum:
      case MergeOp::kAvg:
        if (!in) break;
        acc = acc ? addValues(c.op == MergeOp::kCount ? ValueClass::kExact : classes_[i], *acc, *in) : *in;
        break;
      case MergeOp::kMin:
      case MergeOp::kMax: {
        if (!in) break;
        std::optional<std::string_view> a, b(*in);
        if (acc) a = *acc;
        int cmp = compareValues(classes_[i], b, a);
        if (!acc || (c.op == MergeOp::kMin ? cmp < 0 : cmp > 0)) acc = std::move(in);
        break;
      }
      case MergeOp::kCountDistinct:
      case MergeOp::kSumDistinct: {
        const auto& v = row[c.helper];
        if (!v) break;
        std::optional<std::string_view> view(*v);
        auto [it, inserted] = group.distinct[i].emplace(groupKey(classes_[c.helper], view), *v);
        if (inserted) bytes += v->size() * 2 + 32;
        break;
      }
    }
  }
  return bytes;
}

void GroupAggregator::finalize(Group& group) const {
  // Read the COUNT helpers before AVG overwrites anything: helpers are kCount columns.
  MergedRow out = group.values;
  for (size_t i = 0; i < spec_.columns.size(); ++i) {
    const MergeColumn& c = spec_.columns[i];
    auto& v = out[i];
    switch (c.op) {
      case MergeOp::kCount:
        if (!v) v = "0";
        break;
      case MergeOp::kAvg: {
        uint64_t count = parseCount(group.values[c.helper]);
        if (!v || count == 0) {
          v.reset();
        } else if (classes_[i] == ValueClass::kFloat) {
          v = formatDouble(parseDouble(*v) / static_cast<double>(count));
        } else {
          auto q = decimal::divide(*v, count, avg_scales_[i]);
          v = q ? *q : formatDouble(parseDouble(*v) / static_cast<double>(count));
        }
        break;
      }
      case MergeOp::kCountDistinct: v = std::to_string(group.distinct[i].size()); break;
      case MergeOp::kSumDistinct: {
        v.reset();
        ValueClass cls = classes_[c.helper] == ValueClass::kFloat ? ValueClass::kFloat : ValueClass::kExact;
        for (const auto& [key, value] : group.distinct[i]) v = v ? addValues(cls, *v, value) : value;
        break;
      }
      default: break;
    }
  }
  group.values = std::move(out);
}

void GroupAggregator::compute(MergedRow& row) {
  if (spec_.computed.empty() || failure_) return;
  for (size_t i = 0; i < spec_.columns.size(); ++i) {
    const MergeColumn& c = spec_.columns[i];
    if (c.op != MergeOp::kComputed) continue;
    auto v = evaluateComputed(spec_.computed[c.helper], row, classes_, columns_[i]);
    if (!v) {
      failure_ = v.error();
      return;
    }
    row[i] = std::move(*v);
  }
}

std::vector<MergedRow> GroupAggregator::finish() {
  std::vector<MergedRow> rows;
  if (groups_.empty() && spec_.group_by.empty()) {
    MergedRow row(spec_.columns.size());
    for (size_t i = 0; i < spec_.columns.size(); ++i) {
      MergeOp op = spec_.columns[i].op;
      if (op == MergeOp::kCount || op == MergeOp::kCountDistinct) row[i] = "0";
    }
    compute(row);
    rows.push_back(std::move(row));
  } else {
    rows.reserve(groups_.size());
    for (auto& g : groups_) {
      finalize(g);
      compute(g.values);
      rows.push_back(std::move(g.values));
    }
    groups_.clear();
    index_.clear();
  }
  if (failure_) rows.clear();
  return rows;
}

}  // namespace sp::routing
