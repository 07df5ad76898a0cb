// parser::tableNamePositions: names in table positions of statements the
// parser builds no tree for (issue 20: a column or variable named like a
// sharded table was taken for it).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parser/table_positions.hpp"

namespace sp::parser {
namespace {

using Names = std::vector<std::string>;

TEST(TablePositions, DdlNamesTheTable) {
  EXPECT_EQ(tableNamePositions("CREATE TABLE msg (id INT)"), Names{"msg"});
  EXPECT_EQ(tableNamePositions("ALTER TABLE msg ADD COLUMN x INT"), Names{"msg"});
  EXPECT_EQ(tableNamePositions("DROP TABLE IF EXISTS a, `msg`, db.msg_00"), (Names{"a", "msg", "msg_00"}));
  EXPECT_EQ(tableNamePositions("DROP TEMPORARY TABLE IF EXISTS msg"), Names{"msg"});
  EXPECT_EQ(tableNamePositions("TRUNCATE msg"), Names{"msg"});
  EXPECT_EQ(tableNamePositions("TRUNCATE TABLE im.msg"), Names{"msg"});
  EXPECT_EQ(tableNamePositions("CREATE TABLE msg_16 LIKE msg_00"), (Names{"msg_16", "msg_00"}));
  EXPECT_EQ(tableNamePositions("RENAME TABLE a TO msg, b TO c"), (Names{"a", "msg", "b", "c"}));
  EXPECT_EQ(tableNamePositions("ALTER TABLE a RENAME TO msg"), (Names{"a", "msg"}));
  EXPECT_EQ(tableNamePositions("LOCK TABLES a READ, msg WRITE"), (Names{"a", "msg"}));
  EXPECT_EQ(tableNamePositions("CREATE INDEX i ON msg (conv_id)"), Names{"msg"});
  EXPECT_EQ(tableNamePositions("CREATE TRIGGER tr BEFORE INSERT ON msg FOR EACH ROW SET @a = 1"), Names{"msg"});
  EXPECT_EQ(tableNamePositions("GRANT SELECT ON im.msg TO u"), Names{"msg"});
  EXPECT_EQ(tableNamePositions("SHOW CREATE TABLE msg"), Names{"msg"});
  EXPECT_EQ(tableNamePositions("SHOW COLUMNS FROM msg"), Names{"msg"});
  EXPECT_EQ(tableNamePositions("DESCRIBE msg"), Names{"msg"});
  EXPECT_EQ(tableNamePositions("CREATE TABLE t (id INT, c INT REFERENCES msg (id))"), (Names{"t", "msg"}));
  EXPECT_EQ(tableNamePositions("CREATE VIEW v AS SELECT * FROM t1, msg m WHERE 1"), (Names{"t1", "msg"}));
  EXPECT_EQ(tableNamePositions("INSERT IGNORE INTO msg (a) VALUES (1)"), Names{"msg"});
  EXPECT_EQ(tableNamePositions("UPDATE t1, msg SET a = 1"), (Names{"t1", "msg"}));
  EXPECT_EQ(tableNamePositions("SELECT * FROM a JOIN msg ON a.x = msg.y"), (Names{"a", "msg"}));
}

TEST(TablePositions, ColumnsVariablesAndAliasesAreNotTables) {
  EXPECT_EQ(tableNamePositions("CREATE TABLE t1 (id INT, msg VARCHAR(10))"), Names{"t1"});
  EXPECT_EQ(tableNamePositions("CREATE PROCEDURE p() BEGIN DECLARE msg TEXT; SET msg = 'x'; "
                               "SELECT msg INTO msg FROM t1; FETCH c INTO msg; SELECT msg; END"),
            Names{"t1"});
  EXPECT_EQ(tableNamePositions("SELECT msg FROM t1 AS msg"), Names{"t1"});
  EXPECT_EQ(tableNamePositions("SELECT a FROM t1 msg, t2"), (Names{"t1", "t2"}));
  EXPECT_EQ(tableNamePositions("INSERT INTO t1 (msg) VALUES (1) ON DUPLICATE KEY UPDATE msg = 2"), Names{"t1"});
  EXPECT_EQ(tableNamePositions("UPDATE t1 SET msg = 'a' WHERE msg IS NULL"), Names{"t1"});
  EXPECT_EQ(tableNamePositions("SELECT * FROM t1 JOIN t2 ON msg = 1"), (Names{"t1", "t2"}));
  for (const auto& name : tableNamePositions("ALTER TABLE t1 CHANGE a msg INT, ADD COLUMN msg_00 INT")) {
    EXPECT_TRUE(name != "msg" && name != "msg_00") << name;
  }
  EXPECT_EQ(tableNamePositions("SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg"), Names{});
  EXPECT_EQ(tableNamePositions("GRANT ALL ON msg.* TO u"), Names{});
  EXPECT_EQ(tableNamePositions("SELECT 1 FROM t1 ORDER BY a DESC, msg"), Names{"t1"});
}

// With qualifiers, statement verbs and schemas (for allow lists).
std::string refsText(std::string_view sql) {
  std::string out;
  for (const auto& r : tableReferences(sql)) {
    if (!out.empty()) out += " ";
    out += r.verb + ":" + (r.schema.empty() ? "" : r.schema + ".") + (r.name.empty() ? "<schema>" : r.name) +
           (r.first ? "*" : "");
  }
  return out;
}

TEST(TableReferences, QualifiersVerbsAndSchemas) {
  EXPECT_EQ(refsText("SELECT * FROM im.msg m JOIN `other`.`t` ON 1"), "SELECT:im.msg* SELECT:other.t");
  EXPECT_EQ(refsText("INSERT t1 (a) SELECT a FROM t2"), "INSERT:t1* INSERT:t2");
  EXPECT_EQ(refsText("REPLACE LOW_PRIORITY INTO db.t1 VALUES (1); DELETE FROM t2"), "REPLACE:db.t1* DELETE:t2*");
  EXPECT_EQ(refsText("USE `mysql`"), "USE:mysql.<schema>*");
  EXPECT_EQ(refsText("SHOW TABLES FROM mysql LIKE 'a%'"), "SHOW:mysql.<schema>*");
  EXPECT_EQ(refsText("SHOW FULL COLUMNS FROM msg IN im"), "SHOW:msg* SHOW:im.<schema>");
  EXPECT_EQ(refsText("SHOW INDEX FROM db.msg"), "SHOW:db.msg*");
  EXPECT_EQ(refsText("SHOW CREATE TABLE msg"), "SHOW CREATE:msg*");
  EXPECT_EQ(refsText("SHOW CREATE DATABASE IF NOT EXISTS x"), "SHOW CREATE:x.<schema>*");
  EXPECT_EQ(refsText("SHOW VARIABLES LIKE 'x'"), "");
  EXPECT_EQ(tableNamePositions("SHOW TABLES FROM im"), Names{});
}

}  // namespace
}  // namespace sp::parser
