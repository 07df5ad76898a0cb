// Which backend connection holds a session's LAST_INSERT_ID() (issue 20).
#include <gtest/gtest.h>

#include "proxy/session/session_last_insert_id.hpp"

namespace sp::proxy {
namespace {

TEST(SessionLastInsertId, TheHolderBorrowedAgainNeedsNoRestore) {
  SessionLastInsertId id;
  id.afterStatement({7, 1}, 1);   // insert NULL: generated 1
  id.onBorrow({7, 2});            // nobody borrowed connection 7 in between
  id.afterStatement({7, 2}, 50);  // insert 50: the OK says 50, the server keeps 1
  id.onBorrow({7, 3});
  EXPECT_EQ(id.restoreFor({7, 3}), std::nullopt);  // the server's own value is read
  EXPECT_EQ(id.preferredConnection(), 7u);
}

TEST(SessionLastInsertId, AnotherBorrowerInBetweenMeansRestore) {
  SessionLastInsertId id;
  id.afterStatement({7, 1}, 4);
  id.onBorrow({7, 3});  // loan 2 went to another session
  EXPECT_EQ(id.restoreFor({7, 3}), "SELECT LAST_INSERT_ID(4)");
  id.onRestored({7, 3});
  EXPECT_EQ(id.restoreFor({7, 3}), std::nullopt);
  EXPECT_EQ(id.restoreFor({8, 1}), "SELECT LAST_INSERT_ID(4)");
}

TEST(SessionLastInsertId, StatementsWithoutAnIdLeaveTheHolder) {
  SessionLastInsertId id;
  id.afterStatement({7, 1}, 9);
  id.afterStatement({8, 1}, 0);  // an UPDATE elsewhere: the value did not move
  id.onBorrow({7, 2});
  EXPECT_EQ(id.restoreFor({7, 2}), std::nullopt);
}

TEST(SessionLastInsertId, ANewSessionRestoresZero) {
  SessionLastInsertId id;
  EXPECT_EQ(id.preferredConnection(), 0u);
  EXPECT_EQ(id.restoreFor({3, 5}), "SELECT LAST_INSERT_ID(0)");
  id.adopt(12);
  EXPECT_EQ(id.restoreFor({3, 5}), "SELECT LAST_INSERT_ID(12)");
  id.reset();
  EXPECT_EQ(id.value(), 0u);
}

}  // namespace
}  // namespace sp::proxy
