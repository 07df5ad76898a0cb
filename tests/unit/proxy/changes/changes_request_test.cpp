// The parameters of GET /changes and SHOW CHANGES: accepted forms and
// refusals of hostile input (proxy/changes/changes_request.hpp, changes_command.hpp).
#include <gtest/gtest.h>

#include "proxy/changes/changes_command.hpp"
#include "proxy/changes/changes_request.hpp"

namespace sp::proxy::changes {
namespace {

TEST(ChangesQuery, TablesAndFromPercentDecoded) {
  auto r = parseChangesQuery("tables=msg,tg_channel_message&from=db0%3A0-1-5%2Cdb1:");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->tables, (std::vector<std::string>{"msg", "tg_channel_message"}));
  ASSERT_TRUE(r->from);
  EXPECT_EQ(encodePosition(*r->from), "db0:0-1-5,db1:");
  auto empty = parseChangesQuery("");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->tables.empty());
  EXPECT_FALSE(empty->from);
}

TEST(ChangesQuery, RefusesMalformedParameters) {
  for (const char* bad : {"tables", "tables=", "tables=a,,b", "tables=a b", "tables=msg&tables=msg", "from=",
                          "from=db0", "from=db0:1-2-3&from=db0:1-2-3", "limit=5", "from=%zz", "from=%4", "&",
                          "tables=a;drop", "tables=%00"}) {
    EXPECT_FALSE(parseChangesQuery(bad)) << bad;
  }
  std::string many = "tables=";
  for (int i = 0; i <= static_cast<int>(kMaxStreamTables); ++i) many += (i ? ",t" : "t") + std::to_string(i);
  EXPECT_FALSE(parseChangesQuery(many));
}

TEST(ChangesCommand, ParsesEveryClause) {
  EXPECT_FALSE(parseChangesCommand("SHOW MOVES"));
  auto plain = parseChangesCommand("show changes");
  ASSERT_TRUE(plain && *plain);
  EXPECT_EQ((*plain)->limit, 100u);
  EXPECT_EQ((*plain)->wait_ms, 2000u);
  auto full = parseChangesCommand("SHOW CHANGES FOR msg, tg_channel_message FROM 'db0:0-1-2' LIMIT 5 WAIT 300;");
  ASSERT_TRUE(full && *full) << (full && !*full ? full->error() : "");
  EXPECT_EQ((*full)->request.tables.size(), 2u);
  EXPECT_EQ(encodePosition(*(*full)->request.from), "db0:0-1-2");
  EXPECT_EQ((*full)->limit, 5u);
  EXPECT_EQ((*full)->wait_ms, 300u);
}

TEST(ChangesCommand, RefusesBadClauses) {
  for (const char* bad : {"SHOW CHANGES FROM 'db0'", "SHOW CHANGES FROM db0", "SHOW CHANGES LIMIT 0",
                          "SHOW CHANGES LIMIT 10001", "SHOW CHANGES WAIT 60001", "SHOW CHANGES FOR",
                          "SHOW CHANGES FOR msg,", "SHOW CHANGES junk", "SHOW CHANGES LIMIT 5 FROM 'db0:'",
                          "SHOW CHANGES FROM 'unterminated"}) {
    auto r = parseChangesCommand(bad);
    ASSERT_TRUE(r) << bad;
    EXPECT_FALSE(*r) << bad;
  }
}

}  // namespace
}  // namespace sp::proxy::changes
