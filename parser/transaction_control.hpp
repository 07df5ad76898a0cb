// What a transaction the proxy keeps as a global (XA) transaction needs to
// know of a statement's text (docs/routing.md, "Transactions across
// backends"): which BEGIN it may open as XA START, and which statements of
// a multi-statement packet would end or reshape it.
#pragma once

#include <optional>
#include <string_view>

#include "parser/dialect.hpp"

namespace sp::parser {

// BEGIN, BEGIN WORK, START TRANSACTION [READ WRITE], any case and spacing, a
// trailing `;` allowed: what XA START replaces (READ ONLY, WITH CONSISTENT
// SNAPSHOT and comments keep a plain BEGIN).
bool isPlainBegin(std::string_view sql);

// COMMIT / ROLLBACK with AND CHAIN or RELEASE (the words anywhere in the text).
bool chainsOrReleases(std::string_view sql);

// The first statement of a multi-statement packet that ends, commits or
// reshapes the open transaction (transaction control, savepoints, table
// locks, an implicit commit, a SET of autocommit), or nullopt when it holds
// reads and writes only.
std::optional<std::string_view> firstTransactionControl(std::string_view sql, const Dialect& dialect);

}  // namespace sp::parser
