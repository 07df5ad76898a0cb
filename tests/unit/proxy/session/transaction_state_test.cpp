// The session's transaction state machine, driven by scripted server status
// flags as a backend would send them (transaction_state.hpp).
#include <gtest/gtest.h>

#include "protocol/constants.hpp"
#include "proxy/session/transaction_state.hpp"

namespace sp::proxy {
namespace {

namespace status = protocol::status;
using K = parser::StatementKind;
using Answer = TransactionState::LostAnswer;

TEST(TransactionState, FollowsTheServersFlagsNotTheStatementsSpelling) {
  TransactionState t;
  EXPECT_TRUE(t.autocommit());
  // `SET autocommit = false` (or 'off', @v, setAutoCommit(false)): the server answers without AUTOCOMMIT.
  t.onServerStatus(0);
  EXPECT_FALSE(t.autocommit());
  EXPECT_TRUE(t.transactional());
  EXPECT_EQ(t.clientStatus() & status::kAutocommit, 0);
  // The first INSERT opens the implicit transaction.
  t.onServerStatus(status::kInTrans);
  EXPECT_TRUE(t.inTransaction());
  EXPECT_EQ(t.clientStatus(), status::kInTrans);
  // COMMIT.
  t.onServerStatus(0);
  EXPECT_FALSE(t.inTransaction());
  t.onServerStatus(status::kAutocommit);
  EXPECT_FALSE(t.transactional());
}

TEST(TransactionState, ProxyPacketsCarryNoBackslashEscapesAndAnsiQuotes) {
  TransactionState t(status::kAutocommit | status::kNoBackslashEscapes);
  EXPECT_TRUE(t.noBackslashEscapes());
  EXPECT_EQ(t.clientStatus(), status::kAutocommit | status::kNoBackslashEscapes);
  t.onServerStatus(status::kAutocommit | status::kAnsiQuotes | status::kSessionStateChanged);
  EXPECT_FALSE(t.noBackslashEscapes());
  // SESSION_STATE_CHANGED belongs to one response, not to the session.
  EXPECT_EQ(t.clientStatus(), status::kAutocommit | status::kAnsiQuotes);
}

TEST(TransactionState, DeferredBeginIsATransactionForTheClient) {
  TransactionState t;
  t.deferBegin("BEGIN");
  EXPECT_TRUE(t.transactional());
  EXPECT_EQ(t.clientStatus(), status::kInTrans | status::kAutocommit);
  t.clearPendingBegin();
  EXPECT_EQ(t.clientStatus(), status::kAutocommit);
}

TEST(TransactionState, LostTransactionRefusesEverythingUntilRollback) {
  TransactionState t;
  t.onServerStatus(status::kAutocommit | status::kInTrans);  // BEGIN; UPDATE a
  t.onConnectionLost();                                      // the backend restarts
  EXPECT_TRUE(t.lost());
  EXPECT_FALSE(t.inTransaction());
  // The client still sees a transaction it has to end.
  EXPECT_NE(t.clientStatus() & status::kInTrans, 0);
  EXPECT_EQ(t.answerWhileLost(K::kUpdate, false), Answer::kRefused);
  EXPECT_EQ(t.answerWhileLost(K::kSet, false), Answer::kRefused);      // SET autocommit=1 would commit
  EXPECT_EQ(t.answerWhileLost(K::kBegin, false), Answer::kRefused);    // an implicit commit
  EXPECT_EQ(t.answerWhileLost(K::kSavepoint, false), Answer::kRefused);
  EXPECT_EQ(t.answerWhileLost(K::kRollback, true), Answer::kRefused);  // "ROLLBACK; UPDATE c"
  EXPECT_TRUE(t.lost());
  EXPECT_EQ(t.answerWhileLost(K::kRollback, false), Answer::kRolledBack);
  EXPECT_FALSE(t.lost());
  EXPECT_EQ(t.answerWhileLost(K::kUpdate, false), Answer::kNotLost);
  EXPECT_EQ(t.clientStatus() & status::kInTrans, 0);
}

TEST(TransactionState, CommitOfALostTransactionFailsAndEndsIt) {
  TransactionState t;
  t.onServerStatus(status::kInTrans);
  t.onConnectionLost();
  EXPECT_EQ(t.answerWhileLost(K::kCommit, false), Answer::kCommitFailed);
  EXPECT_FALSE(t.lost());
}

TEST(TransactionState, LosingAConnectionOutsideATransactionLosesNothing) {
  TransactionState t;
  t.onConnectionLost();
  EXPECT_FALSE(t.lost());
  EXPECT_EQ(t.answerWhileLost(K::kUpdate, false), Answer::kNotLost);
}

TEST(TransactionState, ResetForgetsTheLostTransactionAndTheDeferredBegin) {
  TransactionState t;
  t.onServerStatus(status::kInTrans);
  t.onConnectionLost();
  t.deferBegin("START TRANSACTION");
  t.reset(status::kAutocommit | status::kInTrans);  // IN_TRANS of a fresh connection is ignored
  EXPECT_FALSE(t.lost());
  EXPECT_FALSE(t.pendingBegin());
  EXPECT_EQ(t.clientStatus(), status::kAutocommit);
}

}  // namespace
}  // namespace sp::proxy
