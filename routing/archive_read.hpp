// Hot-then-cold reads (storage design, "归档与冷热分层"): a table with
// `archive:` in the shard map keeps old rows in a cold table per shard
// (msg_archive_07 beside msg_07). A SELECT routed to a shard reads both, as
// one statement on the shard's backend:
//
//   FROM msg WHERE conv_id = 7 AND seq > 100 ORDER BY seq LIMIT 50
//   FROM (SELECT * FROM `msg_07` UNION ALL SELECT * FROM `msg_archive_07`) AS `msg_07`
//        WHERE conv_id = 7 AND seq > 100 ORDER BY seq LIMIT 50
//
// Why one statement: it reads one consistent snapshot, and the archive job
// moves each batch in one transaction (INSERT ... SELECT and DELETE), so a
// row is in exactly one of the two tables in any snapshot: nothing is read
// twice or missed while archiving runs. The server pushes the WHERE into both
// branches (condition pushdown into derived tables), so each branch is a
// primary-key range read; ORDER BY and LIMIT apply to the union, exactly as
// one table holding all rows would answer. A range entirely in the hot table
// costs one index lookup on the cold table that finds nothing.
#pragma once
#include <string_view>
#include <vector>

#include "routing/ast_refs.hpp"
#include "routing/rewrite.hpp"
#include "routing/shard_map.hpp"

namespace sp::routing {

// After renameTable(refs, logical, shard.physical_table, edits): turns every
// FROM / JOIN reference to `logical` into the hot-and-cold union (an alias
// written by the client is kept; otherwise the union is named after the hot
// table, so qualifiers renameTable wrote still resolve). No-op when the
// shard has no archive table.
void readHotAndCold(std::string_view sql, const StatementRefs& refs, std::string_view logical, const Shard& shard,
                    std::vector<TextEdit>& edits);

}  // namespace sp::routing
