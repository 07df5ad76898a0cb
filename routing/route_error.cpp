#include "routing/route_error.hpp"

namespace sp::routing {

RouteErrorInfo routeErrorInfo(RouteErrorCode code) {
  auto n = static_cast<uint16_t>(code);
  switch (code) {
    case RouteErrorCode::kParseError: return {n, "42000", "parse_error"};
    case RouteErrorCode::kMissingKey: return {n, "42000", "missing_key"};
    case RouteErrorCode::kMultiShard: return {n, "42000", "multi_shard"};
    case RouteErrorCode::kBadKeyValue: return {n, "22003", "bad_key_value"};
    case RouteErrorCode::kNegativeKey: return {n, "22003", "negative_key"};
    case RouteErrorCode::kMissingMonthBound: return {n, "42000", "missing_month_bound"};
    case RouteErrorCode::kMonthSpanTooLong: return {n, "42000", "month_span_too_long"};
    case RouteErrorCode::kBadMonthValue: return {n, "22007", "bad_month_value"};
    case RouteErrorCode::kInsertWithoutKey: return {n, "42000", "insert_without_key"};
    case RouteErrorCode::kInsertMultiShard: return {n, "42000", "insert_multi_shard"};
    case RouteErrorCode::kShardKeyUpdate: return {n, "42000", "shard_key_update"};
    case RouteErrorCode::kMonthMismatch: return {n, "22007", "month_mismatch"};
    case RouteErrorCode::kCrossShardJoin: return {n, "42000", "cross_shard_join"};
    case RouteErrorCode::kUnsupported: return {n, "42000", "unsupported"};
    case RouteErrorCode::kCrossBackend: return {n, "42000", "cross_backend"};
    case RouteErrorCode::kTooComplex: return {n, "42000", "too_complex"};
    case RouteErrorCode::kPrivateTable: return {n, "42000", "private_table"};
    case RouteErrorCode::kUncheckedDynamicSql: return {n, "42000", "unchecked_dynamic_sql"};
    case RouteErrorCode::kArchivedMonth: return {n, "HY000", "archived_month"};
  }
  return {n, "HY000", "unknown"};
}

}  // namespace sp::routing
