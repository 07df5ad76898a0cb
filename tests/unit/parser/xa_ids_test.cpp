// reservedXidRefusal: a client's XA statement naming the proxy's own ids
// (<xid_prefix>-...) is refused in every spelling the server reads the same
// way; other ids, XA RECOVER and other statements pass.
#include "parser/xa_ids.hpp"

#include <gtest/gtest.h>

namespace sp::parser {
namespace {

bool refused(std::string_view sql, Dialect dialect = {}) {
  return reservedXidRefusal(sql, "sp", dialect).has_value();
}

TEST(ReservedXid, TheProxysIdsAreRefusedForEveryVerb) {
  for (std::string_view sql :
       {"XA COMMIT 'sp-1733-7'", "xa rollback 'sp-1733-7'", "XA START 'sp-1-1','db1'", "XA BEGIN 'sp-x'",
        "XA END 'sp-1-1','db0'", "XA PREPARE 'sp-1-1'", "XA COMMIT 'sp-1-1','db1' ONE PHASE",
        "  /* why */ XA COMMIT \"sp-1-1\"", "/*!XA*/ COMMIT 'sp-1-1'", "XA COMMIT 'sp-1-1';"}) {
    EXPECT_TRUE(refused(sql)) << sql;
  }
  auto message = reservedXidRefusal("XA ROLLBACK 'sp-9-9'", "sp", {});
  ASSERT_TRUE(message);
  EXPECT_EQ(*message,
            "shardproxy: XA transaction ids beginning with 'sp-' are the proxy's own (transactions.xid_prefix: its "
            "transactions across backends and their recovery); a client cannot start, end, prepare, commit or roll "
            "them back");
}

TEST(ReservedXid, HexAndEscapedSpellingsAreDecodedAsTheServerDoes) {
  EXPECT_TRUE(refused("XA COMMIT X'73702d312d31'"));  // 'sp-1-1'
  EXPECT_TRUE(refused("XA COMMIT 0x73702d312d31, 0x646230, 1"));
  EXPECT_TRUE(refused("XA COMMIT 's\\p-1-1'"));  // \p is p with backslash escapes on
  Dialect no_escapes;
  no_escapes.no_backslash_escapes = true;
  EXPECT_FALSE(refused("XA COMMIT 's\\p-1-1'", no_escapes));  // there it is a backslash
  EXPECT_FALSE(refused("XA COMMIT 'sp''-1'"));  // sp'-1: another id
  // Forms this check does not decode are refused rather than guessed.
  EXPECT_TRUE(refused("XA COMMIT _latin1'sp-1-1'"));
  EXPECT_TRUE(refused("XA COMMIT 'sp' '-1-1'"));
  EXPECT_TRUE(refused("XA COMMIT b'0111'"));
}

TEST(ReservedXid, ClientIdsRecoverAndOtherStatementsPass) {
  for (std::string_view sql :
       {"XA START 'order-17'", "XA COMMIT 'spare-1'", "XA COMMIT 'sp'", "XA COMMIT X'6f72646572'", "XA RECOVER",
        "XA RECOVER FORMAT='SQL'", "SELECT 'XA COMMIT ''sp-1-1'''", "UPDATE t SET exact = 1", "SELECT 1",
        "BEGIN", "XA"}) {
    EXPECT_FALSE(refused(sql)) << sql;
  }
  // Another prefix: another namespace.
  EXPECT_FALSE(reservedXidRefusal("XA COMMIT 'sp-1-1'", "px", {}).has_value());
  EXPECT_TRUE(reservedXidRefusal("XA COMMIT 'px-1-1'", "px", {}).has_value());
}

}  // namespace
}  // namespace sp::parser
