#include "routing/merge/merge_spec.hpp"

namespace sp::routing {
namespace {

std::string_view opName(MergeOp op) {
  switch (op) {
    case MergeOp::kValue: return "value";
    case MergeOp::kCount: return "count";
    case MergeOp::kSum: return "sum";
    case MergeOp::kMin: return "min";
    case MergeOp::kMax: return "max";
    case MergeOp::kAvg: return "avg";
    case MergeOp::kCountDistinct: return "count distinct";
    case MergeOp::kSumDistinct: return "sum distinct";
    case MergeOp::kComputed: return "computed";
  }
  return "?";
}

std::string_view compareName(HavingOp op) {
  switch (op) {
    case HavingOp::kEq: return "=";
    case HavingOp::kNe: return "<>";
    case HavingOp::kLt: return "<";
    case HavingOp::kLe: return "<=";
    case HavingOp::kGt: return ">";
    case HavingOp::kGe: return ">=";
  }
  return "?";
}

// Positions are 1-based like SQL's; helpers after `*` are "helper k".
std::string position(uint32_t column) {
  if (column >= MergeSpec::kFromEnd) return "helper " + std::to_string(column - MergeSpec::kFromEnd + 1);
  return std::to_string(column + 1);
}

}  // namespace

std::string MergeSpec::describe() const {
  std::string out;
  auto stage = [&](const std::string& s) { out += (out.empty() ? "" : " -> ") + s; };
  if (aggregate) {
    std::string s = "Aggregate(";
    if (!group_by.empty()) {
      s += "group by";
      for (size_t i = 0; i < group_by.size(); ++i) s += (i ? ", " : " ") + position(group_by[i]);
      s += "; ";
    }
    std::string ops;
    for (const auto& c : columns) {
      if (c.op == MergeOp::kValue) continue;
      ops += (ops.empty() ? "" : ", ") + std::string(opName(c.op));
    }
    s += ops.empty() ? "keys only" : ops;
    stage(s + ")");
    if (!having.empty()) {
      std::string h = "Having(";
      for (size_t i = 0; i < having.size(); ++i) {
        h += (i ? " and " : "") + position(having[i].column) + " " + std::string(compareName(having[i].op)) + " " +
             (having[i].literal ? *having[i].literal : "NULL");
      }
      stage(h + ")");
    }
  } else {
    stage(order_by.empty() ? "Concatenate" : "MergeSort");
  }
  if (!order_by.empty()) {
    std::string s = "OrderBy(";
    for (size_t i = 0; i < order_by.size(); ++i) {
      s += (i ? ", " : "") + position(order_by[i].column) + (order_by[i].descending ? " desc" : "");
    }
    stage(s + ")");
  }
  if (distinct) stage("Distinct");
  if (limit || offset) {
    stage("Limit(" + (limit ? std::to_string(*limit) : std::string("all")) +
          (offset ? " offset " + std::to_string(offset) : "") + ")");
  }
  size_t hidden = helper_columns;
  if (!columns.empty()) {
    hidden = 0;
    for (const auto& c : columns) hidden += !c.visible;
  }
  if (hidden) stage("Project(drop " + std::to_string(hidden) + " helper" + (hidden > 1 ? "s" : "") + ")");
  return out;
}

}  // namespace sp::routing
