// Byte-exact rewriting: the routed SQL is the client's text with a few byte
// ranges replaced (logical -> physical table names) and, for month tables, a
// month predicate inserted. Everything else (comments, spacing, case, hints,
// version comments) is kept as written.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "routing/ast_refs.hpp"

namespace sp::routing {

struct TextEdit {
  uint32_t begin = 0;  // replace sql[begin, end) ...
  uint32_t end = 0;
  std::string replacement;  // ... with this (begin == end: insertion)
};

// Applies non-overlapping edits (any order) to sql.
std::string applyEdits(std::string_view sql, std::vector<TextEdit> edits);

// Adds edits renaming every reference to logical table `logical` (ASCII
// case-insensitive) to `physical`: table names in FROM/JOIN/INTO/UPDATE/DELETE
// positions (a db qualifier is kept) and column qualifiers `msg.seq`,
// `db.msg.seq`, `msg.*`. A backticked name stays backticked. Column
// qualifiers are left alone when some table in the statement has the alias
// `logical` (then the qualifier means that alias).
void renameTable(const StatementRefs& refs, std::string_view logical, std::string_view physical,
                 std::vector<TextEdit>& edits);

}  // namespace sp::routing
