// Column metadata of a merged result as one unsharded MariaDB reports it.
// The server's string metadata depends on its plan: when the result passes
// through a temporary table (GROUP BY without a usable index, ORDER BY after
// GROUP BY that the grouping order does not give, DISTINCT) a string item is
// sent as the temporary field: decimals 0 instead of 39 (NOT_FIXED_DEC), and
// TEXT/BLOB as BLOB (252) with the field's length (the item's / mbmaxlen).
// Checked on MariaDB 10.11: MIN(mediumtext utf8mb4) is (MEDIUM_BLOB,
// 268435440, 39) directly and (BLOB, 67108860, 0) materialized.
#pragma once
#include <optional>
#include <string>

#include "protocol/resultset.hpp"
#include "routing/merge/merge_spec.hpp"

namespace sp::routing {

// A string or TEXT/BLOB definition in its materialized form (decimals 0).
bool isMaterializedString(const protocol::ColumnDefinition41& column);
// The definition a temporary-table field of this string item would have;
// other types are returned unchanged.
protocol::ColumnDefinition41 materializedString(protocol::ColumnDefinition41 column);

// Whether the unsharded server materializes this aggregate query's result to
// sort it: GROUP BY with an ORDER BY that is not a same-direction prefix of
// the GROUP BY list, both without the columns the WHERE pins to one value
// (the shards never see that ORDER BY: it is removed from their SQL, so
// their metadata cannot show it).
bool sortsAfterGrouping(const MergeSpec& spec);

// Folds another shard's definition of the same column into `kept`: one shard
// whose plan materialized (it had rows to group, another had an impossible
// range) shows what the unsharded server, holding all rows, reports.
void foldShardColumn(protocol::ColumnDefinition41& kept, const protocol::ColumnDefinition41& other);

// Why another shard's definition of column `index` cannot be merged under
// `kept` (another name, another type: the physical tables differ, and the
// merged rows would show one shard's values under another's label), or
// nullopt. String types are one family (a materialized result sends BLOB).
std::optional<std::string> shardColumnMismatch(size_t index, const protocol::ColumnDefinition41& kept,
                                               const protocol::ColumnDefinition41& other);

}  // namespace sp::routing
