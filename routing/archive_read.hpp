// Hot-then-cold reads (storage design, "归档与冷热分层"): a table with
// `archive:` in the shard map keeps old rows in a cold table per shard
// (msg_archive_07 beside msg_07). A SELECT routed to a shard reads both, as
// one statement on the shard's backend:
//
//   FROM msg WHERE conv_id = 7 AND seq > 100 ORDER BY seq LIMIT 50
//   FROM ((SELECT * FROM `msg_07` AS `msg_07` WHERE conv_id = 7 AND seq > 100 ORDER BY seq LIMIT 50)
//         UNION ALL
//         (SELECT * FROM `msg_archive_07` AS `msg_07` WHERE (conv_id = 7 AND seq > 100)
//            AND `seq` < (SELECT IFNULL(MIN(`seq`), 18446744073709551615) FROM `msg_07` WHERE `conv_id` = 7)
//          ORDER BY seq LIMIT 50)) AS `msg_07`
//   WHERE conv_id = 7 AND seq > 100 ORDER BY seq LIMIT 50
//
// Why one statement: it reads one consistent snapshot, and the archive job
// moves each batch in one transaction (INSERT ... SELECT and DELETE), so a
// row is in exactly one of the two tables in any snapshot: nothing is read
// twice or missed while archiving runs.
//
// The cold guard (one conversation, `archive.seq_column`): the archive only
// holds rows below the conversation's lowest hot seq (the archive moves each
// conversation's oldest rows, proxy/lifecycle/msg_archiver.cpp), so the cold branch
// reads only below it. The server evaluates the MIN() subquery while
// optimizing (one index probe on the hot table, "Select tables optimized
// away"); when the read's range starts at or above it the cold branch is an
// impossible range and the archive's rows and index are never read. The MIN
// comes from the same snapshot as both branches, so an archive batch between
// "probe" and "read" cannot exist. No hot row left (the whole conversation
// archived): IFNULL makes the bound the largest BIGINT UNSIGNED.
//
// ORDER BY ... LIMIT n [OFFSET m] pushed into both branches (each gets the
// WHERE, the ORDER BY and LIMIT n + m; the outer query keeps all three): the
// first n + m rows of the union are among the first n + m of each branch, so
// each branch reads at most n + m rows instead of its whole range. Only for
// plain shapes (pushdownOrderLimit below); others read the whole ranges.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "parser/ast.hpp"
#include "routing/ast_refs.hpp"
#include "routing/rewrite.hpp"
#include "routing/map/shard_map.hpp"
#include "routing/values.hpp"

namespace sp::routing {

// What each branch of the union repeats from the statement, as routed text.
struct BranchOrderLimit {
  std::string where;     // the WHERE condition (renames applied); empty when none
  std::string order_by;  // "seq DESC, ..." (renames applied)
  uint64_t rows = 0;     // LIMIT n + OFFSET m
};

// The ORDER BY / LIMIT to push into the branches, or nullopt when the
// statement's shape does not allow it: a single-table SELECT (no join or
// subquery naming a table) without UNION, DISTINCT, GROUP BY, HAVING,
// aggregates, window functions, SQL_CALC_FOUND_ROWS, INTO or locking;
// ORDER BY of plain columns that no select alias shadows; LIMIT and OFFSET
// integer literals; no `?` in the WHERE (the branches would repeat it, and a
// prepared statement's parameter count must stay the client's). A `?` whose
// value is a literal the plan cache lifted (ParamValue::Kind::kLiteral)
// counts as that literal.
std::optional<BranchOrderLimit> pushdownOrderLimit(std::string_view sql, const parser::Statement& statement,
                                                   const StatementRefs& refs, std::span<const ParamValue> params,
                                                   const std::vector<TextEdit>& edits);

// After renameTable(refs, logical, shard.physical_table, edits): turns every
// FROM / JOIN reference to `logical` into the hot-and-cold union (an alias
// written by the client is kept; otherwise the union is named after the hot
// table, so qualifiers renameTable wrote still resolve). `key`: the one shard
// key value the WHERE pins (the cold guard needs it; nullopt: no guard).
// No-op when the shard has no archive table. True when the branches repeat
// text of the statement (Plan::copies_text).
bool readHotAndCold(std::string_view sql, const parser::Statement& statement, const StatementRefs& refs,
                    const TableRule& rule, const Shard& shard, std::optional<uint64_t> key,
                    std::span<const ParamValue> params, std::vector<TextEdit>& edits);

}  // namespace sp::routing
