// Names in table positions of a statement the parser does not build a tree
// for (DDL, SHOW, LOCK, GRANT, stored-program bodies, text that does not
// parse): a lexical scan, so that a column, variable or alias that merely
// spells a table's name (`CREATE TABLE t (msg TEXT)`, `DECLARE msg TEXT`,
// `SELECT msg FROM t`) is not taken for that table.
//
// Table positions recognized (each name may be qualified, `db.t`; the last
// part is returned, unquoted):
//  - after FROM, JOIN, STRAIGHT_JOIN, TABLE, TABLES, UPDATE (not the one of
//    ON DUPLICATE KEY UPDATE), REFERENCES, TRUNCATE, and INTO when it follows
//    INSERT/REPLACE (SELECT/FETCH ... INTO names variables), skipping
//    IF [NOT] EXISTS, and each further element of such a list after a comma
//    at the same parenthesis depth (`DROP TABLE a, b`, `FROM a x, b`,
//    `LOCK TABLES a READ, b WRITE`, `RENAME TABLE a TO b, c TO d`);
//  - after LIKE when it follows a table name, and TO in RENAME/ALTER (`RENAME TABLE a TO b`,
//    `CREATE TABLE a LIKE b`) and after RENAME [TO|AS] (`ALTER TABLE a RENAME TO b`);
//  - after ON when the name is followed by `(`, FOR, TO, FROM or the end
//    (`CREATE INDEX i ON t (c)`, `CREATE TRIGGER .. ON t FOR EACH ROW`,
//    `GRANT .. ON t TO u`, `REVOKE .. ON t FROM u`), not in `JOIN .. ON a = b`;
//  - the first name after DESCRIBE/DESC/EXPLAIN at the start of the statement.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "parser/dialect.hpp"

namespace sp::parser {

std::vector<std::string> tableNamePositions(std::string_view sql, const Dialect& dialect = {});

// The same names with their qualifier (`db.t`: schema "db"; empty when
// unqualified) and the verb of the statement naming them, for per-user allow
// lists (routing/allow_list.hpp). Also names the table of `INSERT t ...` /
// `REPLACE t ...` written without INTO, and the schema of `USE db` and
// `SHOW ... FROM|IN db` (as a TableReference with an empty name).
struct TableReference {
  std::string schema;  // unquoted; empty when not qualified
  std::string name;    // unquoted; empty for a schema alone (USE db, SHOW TABLES FROM db)
  std::string verb;    // the statement's first word, upper case (SELECT, INSERT, ... SHOW, DESCRIBE; SHOW CREATE)
  bool first = false;  // the first table of its statement (the one an INSERT/UPDATE/DELETE writes)
};
std::vector<TableReference> tableReferences(std::string_view sql, const Dialect& dialect = {});

}  // namespace sp::parser
