// What the proxy does with the result sets of a scatter plan: the planner
// fills a MergeSpec next to the per-shard SQL (routing/scatter.cpp), the
// ResultMerger (routing/merge/merge.hpp) executes it over the shards' text rows.
//
// Shape of the data:
//  - every shard returns the same columns ("shard columns"): the client's
//    select items in order, then `helper_columns` helpers the rewrite
//    appended (ORDER BY / GROUP BY keys, AVG's COUNT, HAVING aggregates,
//    the argument of COUNT(DISTINCT x));
//  - the merged row has one value per shard column: the shard row itself
//    (row mode), or the merged partial aggregates (aggregate mode, where
//    `columns` has one entry per shard column, columns[i].source == i);
//    ORDER BY, HAVING and the group key refer to these positions;
//  - the client sees the visible merged columns, in order (Project).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sp::routing {

enum class MergeOp : uint8_t {
  kValue,          // the shard value (group key, or any value of the group)
  kCount,          // partial COUNTs: summed (0 when no row)
  kSum,            // partial SUMs: exact decimal addition, NULLs skipped (NULL when none)
  kMin,
  kMax,
  kAvg,            // `source` holds SUM(x), `helper` COUNT(x): SUM/COUNT at SUM's scale + 4
  kCountDistinct,  // `helper` holds the distinct argument (shards GROUP BY it): counted once per value;
                   // `source` is the item itself (its metadata is the client's)
  kSumDistinct,    // same, summed once per value
  kComputed,       // an expression over other merged columns (MergeSpec::computed[helper]), evaluated
                   // after the groups are merged; `source` is the item itself (the shards compute it on
                   // their partial groups only so that its metadata is the server's)
};

// An expression over merged aggregates evaluated at the proxy, e.g. COUNT(*) * 2,
// SUM(x) / COUNT(*), IFNULL(MAX(x), 0), ROUND(AVG(x), 2). Exact decimal
// arithmetic only (routing/merge/merge_compute.hpp). Nodes refer to each other by
// index; the planner keeps a division out of further arithmetic, because
// MariaDB carries a quotient on with 9-digit precision that the proxy does not
// reproduce (it only rounds the final value, which it does exactly).
struct ComputedNode {
  enum class Kind : uint8_t {
    kColumn,   // merged column `column`
    kLiteral,  // `literal` (decimal text), or NULL when !literal
    kNeg, kAdd, kSub, kMul,
    kDiv,      // args[0] / args[1]; NULL for a zero divisor (as the server's SELECT)
    kFirstNonNull,  // IFNULL / COALESCE
    kRound,    // ROUND(args[0], digits)
  };
  Kind kind = Kind::kLiteral;
  uint32_t column = 0;
  std::optional<std::string> literal;
  std::vector<uint32_t> args;  // node indexes
  uint32_t digits = 0;         // kRound
  // kDiv that is an AVG of a GROUP BY query: MariaDB groups in a temporary
  // table whose AVG field keeps the AVG's own scale (SUM's + 4), so what is
  // computed from it (ROUND(AVG(x), 2)) starts from that rounded value.
  bool avg_rounded_first = false;
};

struct ComputedExpr {
  std::vector<ComputedNode> nodes;
  uint32_t root = 0;
  std::string text;  // as the client wrote it, for errors
};

struct MergeColumn {
  MergeOp op = MergeOp::kValue;
  uint32_t source = 0;        // shard column of the value / partial aggregate
  uint32_t helper = 0;        // kAvg: the COUNT helper column; k*Distinct: the distinct argument column
  bool visible = true;        // sent to the client (helpers are not)
  std::string name;           // client-visible name when the shard's differs (AVG rewritten to SUM); else empty
};

struct MergeSortKey {
  uint32_t column = 0;  // merged-row position
  bool descending = false;
};

enum class HavingOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };

// What the literal was in the SQL: it decides how the server compares
// (routing/merge/compare_coerce.hpp): a number (integer, DECIMAL, TRUE/FALSE) or a string.
enum class LiteralType : uint8_t { kExact, kString };

// HAVING evaluated at the proxy: a conjunction of `column <op> literal`.
struct HavingTerm {
  uint32_t column = 0;  // merged-row position
  HavingOp op = HavingOp::kEq;
  std::optional<std::string> literal;  // the literal's value; nullopt for NULL (never true)
  LiteralType literal_type = LiteralType::kExact;
};

struct MergeSpec {
  // Aggregate mode: rows are grouped by `group_by` and the partial aggregates
  // merged (one row for no GROUP BY even when every shard is empty). Row
  // mode: rows pass through (concatenated, or merge-sorted on order_by).
  bool aggregate = false;
  // Row mode with `*` in the select list: the visible column count is only
  // known from the shards' metadata; then `columns` is empty and the visible
  // columns are all shard columns but the last `helper_columns`, and
  // order_by positions >= kFromEnd count helpers (kFromEnd + k = helper k).
  uint32_t helper_columns = 0;
  std::vector<MergeColumn> columns;  // aggregate mode, and row mode without `*`
  std::vector<uint32_t> group_by;    // shard columns forming the group key
  // Merged positions the WHERE pins to one value (`col = literal`): MariaDB
  // drops them from GROUP BY / ORDER BY, which decides its result metadata
  // (routing/merge/merge_metadata.hpp). Not used for the merge itself.
  std::vector<uint32_t> constant_columns;
  std::vector<ComputedExpr> computed;  // kComputed columns' expressions
  std::vector<HavingTerm> having;
  std::vector<MergeSortKey> order_by;  // empty: shard order (row mode) / group key order (aggregate)
  bool distinct = false;               // SELECT DISTINCT: duplicates of visible columns dropped
  std::optional<uint64_t> limit;
  uint64_t offset = 0;

  static constexpr uint32_t kFromEnd = 1u << 30;

  // e.g. "Aggregate(group by 1; count, avg) -> OrderBy(2 desc) -> Limit(10)"
  std::string describe() const;
};

}  // namespace sp::routing
