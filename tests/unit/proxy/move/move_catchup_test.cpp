// The catch-up applier (proxy/move/move_catchup.hpp) over a scripted event source
// and a fake target that keeps a table by primary key, interpreting the
// applier's own REPLACE/DELETE statements inside transactions.
#include <gtest/gtest.h>

#include <map>

#include "proxy/move/move_catchup.hpp"
#include "tests/unit/proxy/exec/scripted_shard.hpp"

namespace sp::proxy {
namespace {

using protocol::BinlogEvent;
using protocol::BinlogPosition;
using protocol::BinlogRowsEvent;
using protocol::BinlogValue;

constexpr const char* kFile = "mariadb-bin.000007";

class ScriptedSource : public BinlogEventSource {
 public:
  explicit ScriptedSource(std::vector<BinlogEvent> events) : events_(std::move(events)) {}
  awaitable<Expected<BinlogEvent>> next() override {
    if (next_ == events_.size()) co_return std::unexpected(std::string("script ended"));
    position_ = events_[next_].end;
    co_return events_[next_++];
  }
  BinlogPosition position() const override { return position_; }
  size_t consumed() const { return next_; }

 private:
  std::vector<BinlogEvent> events_;
  size_t next_ = 0;
  BinlogPosition position_{kFile, 4};
};

// Splits "(a, b), (c, d)" into tuples of literals (the applier's literals
// hold no ", " or parentheses).
std::vector<std::vector<std::string>> tuples(std::string_view text) {
  std::vector<std::vector<std::string>> out;
  size_t pos = 0;
  while ((pos = text.find('(', pos)) != std::string_view::npos) {
    size_t end = text.find(')', pos);
    std::string_view inner = text.substr(pos + 1, end - pos - 1);
    auto& t = out.emplace_back();
    size_t start = 0;
    for (size_t comma; (comma = inner.find(", ", start)) != std::string_view::npos; start = comma + 2) {
      t.emplace_back(inner.substr(start, comma - start));
    }
    t.emplace_back(inner.substr(start));
    pos = end + 1;
  }
  return out;
}

// A table of rows (literals) by primary key (the first two columns); logs
// each transaction as START TRANSACTION, its statements, COMMIT or ROLLBACK.
class FakeTable : public CatchupTarget {
 public:
  awaitable<Expected<void>> applyTransaction(const std::vector<std::string>& statements) override {
    ++transactions;
    log.emplace_back("START TRANSACTION");
    auto pending = rows;
    for (const auto& sql : statements) {
      log.push_back(sql);
      auto r = apply(pending, sql);
      if (!r) {
        log.emplace_back("ROLLBACK");
        co_return r;
      }
    }
    rows = pending;
    log.emplace_back("COMMIT");
    co_return Expected<void>{};
  }
  std::map<std::string, std::vector<std::string>> rows;
  std::vector<std::string> log;
  std::optional<std::string> fail_on;
  int transactions = 0;

 private:
  Expected<void> apply(std::map<std::string, std::vector<std::string>>& pending, std::string_view sql) const {
    if (fail_on && sql.find(*fail_on) != std::string_view::npos) return std::unexpected(std::string("1205: lock wait timeout"));
    if (sql.starts_with("REPLACE INTO `im`.`msg_05_new` (`conv_id`, `id`, `body`) VALUES ")) {
      for (auto& t : tuples(sql.substr(sql.find("VALUES ")))) pending[t[0] + "," + t[1]] = t;
    } else if (sql.starts_with("DELETE FROM `im`.`msg_05_new` WHERE (`conv_id` = ")) {
      // "(`conv_id` = 5 AND `id` = 2) OR (...)"
      for (auto& t : tuples(sql.substr(sql.find("WHERE ")))) {
        if (t.size() != 1) return std::unexpected("bad key " + std::string(sql));
        auto a = t[0].find(" = "), and_ = t[0].find(" AND "), b = t[0].rfind(" = ");
        pending.erase(t[0].substr(a + 3, and_ - a - 3) + "," + t[0].substr(b + 3));
      }
    } else {
      return std::unexpected("unexpected statement " + std::string(sql));
    }
    return {};
  }
};

BinlogValue integer(int64_t v) {
  BinlogValue b;
  b.kind = BinlogValue::Kind::kInt;
  b.i = v;
  return b;
}
BinlogValue bytes(std::string s) {
  BinlogValue b;
  b.kind = BinlogValue::Kind::kBytes;
  b.text = std::move(s);
  return b;
}
std::vector<BinlogValue> row(int64_t conv, int64_t id, std::string body) {
  return {integer(conv), integer(id), bytes(std::move(body))};
}

uint64_t next_pos = 100;
BinlogEvent at(decltype(BinlogEvent::body) body) {
  BinlogEvent e;
  e.header.timestamp = 1700000000;
  next_pos += 50;
  e.header.log_pos = static_cast<uint32_t>(next_pos);
  e.end = {kFile, next_pos};
  e.body = std::move(body);
  return e;
}
BinlogEvent gtid() { return at(protocol::BinlogGtidEvent{}); }
BinlogEvent commit() { return at(protocol::BinlogCommitEvent{77}); }
BinlogEvent rows(BinlogRowsEvent::Kind kind, std::vector<std::vector<BinlogValue>> images,
                 std::string table = "msg_05") {
  BinlogRowsEvent r;
  r.kind = kind;
  r.schema = "im";
  r.table = std::move(table);
  r.column_names = {"conv_id", "id", "body"};
  r.primary_key = {0, 1};
  r.rows = std::move(images);
  return at(std::move(r));
}
using K = BinlogRowsEvent::Kind;

CatchupConfig config(uint32_t batch_transactions = 500) {
  CatchupConfig c;
  c.batch_transactions = batch_transactions;
  c.filter = {"im", "msg_05", "conv_id", [](const BinlogValue& v) { return v.kind == BinlogValue::Kind::kInt && v.i % 16 == 5; }};
  c.target_table = "`im`.`msg_05_new`";
  return c;
}

std::map<std::string, std::vector<std::string>> table(std::initializer_list<std::vector<std::string>> rs) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& r : rs) out[r[0] + "," + r[1]] = r;
  return out;
}

Expected<void> runAll(ScriptedSource& source, FakeTable& target, const BinlogPosition& stop) {
  MoveCatchup catchup(source, target, config());
  return test::runToEnd(catchup.runUntil(stop));
}

TEST(MoveCatchup, AppliesTheMatchingRowsOfASourceTransaction) {
  ScriptedSource source({gtid(), rows(K::kInsert, {row(5, 1, "a"), row(6, 1, "b"), row(21, 2, "c")}),
                         rows(K::kInsert, {row(5, 9, "other table")}, "msg_06"), commit()});
  FakeTable target;
  MoveCatchup catchup(source, target, config());
  BinlogPosition stop{kFile, next_pos};
  ASSERT_TRUE(test::runToEnd(catchup.runUntil(stop)).has_value());
  EXPECT_EQ(target.log, (std::vector<std::string>{
                            "START TRANSACTION",
                            "REPLACE INTO `im`.`msg_05_new` (`conv_id`, `id`, `body`) VALUES (5, 1, X'61'), (21, 2, X'63')",
                            "COMMIT"}));
  EXPECT_EQ(catchup.progress().rows_applied, 2u);
  EXPECT_EQ(catchup.progress().transactions_applied, 1u);
  EXPECT_EQ(catchup.progress().batches_applied, 1u);
  EXPECT_EQ(catchup.progress().events, 4u);
  EXPECT_EQ(catchup.progress().applied, stop);
  EXPECT_EQ(catchup.lagBytes({kFile, next_pos + 30}), std::optional<uint64_t>(30));
  EXPECT_EQ(catchup.lagBytes({"mariadb-bin.000008", 4}), std::nullopt);
}

TEST(MoveCatchup, SendsNothingForTransactionsWithoutMatchingRows) {
  ScriptedSource source({gtid(), rows(K::kInsert, {row(6, 1, "b")}), commit(), gtid(),
                         rows(K::kDelete, {row(7, 1, "b")}), commit()});
  FakeTable target;
  ASSERT_TRUE(runAll(source, target, {kFile, next_pos}).has_value());
  EXPECT_TRUE(target.log.empty());
}

TEST(MoveCatchup, UpdatesFollowTheRowInAndOutOfTheMovingKeys) {
  ScriptedSource source({
      gtid(), rows(K::kInsert, {row(5, 1, "a"), row(5, 2, "b"), row(21, 3, "c")}), commit(),
      gtid(),
      rows(K::kUpdate, {row(5, 1, "a"), row(5, 1, "a2"),      // plain update: REPLACE
                        row(5, 2, "b"), row(5, 20, "b"),      // primary key change: DELETE old, REPLACE new
                        row(21, 3, "c"), row(6, 3, "c"),      // leaves the moving keys: DELETE
                        row(6, 4, "d"), row(37, 4, "d")}),    // enters them: REPLACE
      commit()});
  FakeTable target;
  ASSERT_TRUE(runAll(source, target, {kFile, next_pos}).has_value());
  EXPECT_EQ(target.rows, table({{"5", "1", "X'6132'"}, {"5", "20", "X'62'"}, {"37", "4", "X'64'"}}));
  // Both source transactions in one batch, in binlog order; the second's
  // first REPLACE joined the first's (the later image of (5, 1) wins).
  EXPECT_EQ(target.transactions, 1);
  EXPECT_EQ(target.log[1], "REPLACE INTO `im`.`msg_05_new` (`conv_id`, `id`, `body`) VALUES (5, 1, X'61'), "
                           "(5, 2, X'62'), (21, 3, X'63'), (5, 1, X'6132')");
  EXPECT_EQ(target.log[2], "DELETE FROM `im`.`msg_05_new` WHERE (`conv_id` = 5 AND `id` = 2)");
}

TEST(MoveCatchup, ReplayingTheSameEventsLeavesTheSameRows) {
  // Keys swap inside one statement; a row is inserted, updated and deleted.
  std::vector<BinlogEvent> script = {
      gtid(), rows(K::kInsert, {row(5, 1, "a"), row(5, 2, "b"), row(5, 3, "c")}), commit(),
      gtid(), rows(K::kUpdate, {row(5, 2, "b"), row(5, 4, "b"), row(5, 1, "a"), row(5, 2, "a")}), commit(),
      gtid(), rows(K::kInsert, {row(5, 9, "x")}), rows(K::kUpdate, {row(5, 9, "x"), row(5, 9, "y")}),
      rows(K::kDelete, {row(5, 9, "y"), row(5, 3, "c")}), commit()};
  const BinlogPosition stop{kFile, next_pos};
  FakeTable target;
  ScriptedSource first(script);
  ASSERT_TRUE(runAll(first, target, stop).has_value());
  const auto once = target.rows;
  EXPECT_EQ(once, table({{"5", "2", "X'61'"}, {"5", "4", "X'62'"}}));
  ScriptedSource again(script);
  ASSERT_TRUE(runAll(again, target, stop).has_value());
  EXPECT_EQ(target.rows, once);
  // Also from the middle (the snapshot may already hold the first transaction).
  ScriptedSource tail(std::vector<BinlogEvent>(script.begin() + 3, script.end()));
  ASSERT_TRUE(runAll(tail, target, stop).has_value());
  EXPECT_EQ(target.rows, once);
}

TEST(MoveCatchup, RunUntilFinishesTheTransactionThatReachesTheStop) {
  std::vector<BinlogEvent> script = {gtid(), rows(K::kInsert, {row(5, 1, "a")}), commit()};
  const BinlogPosition first_end = script.back().end;
  script.push_back(gtid());
  const BinlogPosition stop = script.back().end;  // inside the second transaction
  script.push_back(rows(K::kInsert, {row(5, 2, "b")}));
  script.push_back(commit());
  const BinlogPosition second_end = script.back().end;
  script.push_back(gtid());
  script.push_back(rows(K::kInsert, {row(5, 3, "c")}));
  script.push_back(commit());
  ScriptedSource source(script);
  FakeTable target;
  MoveCatchup catchup(source, target, config());
  ASSERT_TRUE(test::runToEnd(catchup.runUntil(first_end)).has_value());
  EXPECT_EQ(source.consumed(), 3u);
  ASSERT_TRUE(test::runToEnd(catchup.runUntil(stop)).has_value());
  EXPECT_EQ(source.consumed(), 6u);
  EXPECT_EQ(catchup.progress().applied, second_end);
  EXPECT_EQ(target.rows, table({{"5", "1", "X'61'"}, {"5", "2", "X'62'"}}));
}

TEST(MoveCatchup, BatchesSourceTransactionsUpToTheBound) {
  // Five source transactions of one row each, three per batch: two target
  // transactions; a row inserted and deleted in different batches is gone.
  std::vector<BinlogEvent> script;
  for (int i = 1; i <= 4; ++i) {
    script.push_back(gtid());
    script.push_back(rows(K::kInsert, {row(5, i, "r")}));
    script.push_back(commit());
  }
  const BinlogPosition third_end = script[8].end;
  script.push_back(gtid());
  script.push_back(rows(K::kDelete, {row(5, 1, "r")}));
  script.push_back(commit());
  ScriptedSource source(script);
  FakeTable target;
  MoveCatchup catchup(source, target, config(3));
  const BinlogPosition stop = script.back().end;
  ASSERT_TRUE(test::runToEnd(catchup.runUntil(third_end)).has_value());
  EXPECT_EQ(target.transactions, 1);  // full at the third
  EXPECT_EQ(catchup.progress().applied, third_end);
  ASSERT_TRUE(test::runToEnd(catchup.runUntil(stop)).has_value());
  EXPECT_EQ(target.transactions, 2);  // the rest at the stop
  EXPECT_EQ(catchup.progress().transactions_applied, 5u);
  EXPECT_EQ(catchup.progress().batches_applied, 2u);
  EXPECT_EQ(catchup.progress().rows_applied, 5u);
  EXPECT_EQ(catchup.progress().applied, stop);
  EXPECT_EQ(target.rows, table({{"5", "2", "X'72'"}, {"5", "3", "X'72'"}, {"5", "4", "X'72'"}}));
}

TEST(MoveCatchup, ABatchFullOfBytesIsAppliedUpToTheTransactionBeforeTheOneThatDidNotFit) {
  std::vector<BinlogEvent> script = {gtid(), rows(K::kInsert, {row(5, 1, std::string(100, 'a'))}), commit()};
  const BinlogPosition first_end = script.back().end;
  script.push_back(gtid());
  script.push_back(rows(K::kInsert, {row(5, 2, std::string(100, 'b'))}));
  script.push_back(commit());
  ScriptedSource source(script);
  FakeTable target;
  auto c = config();
  c.batch_bytes = 300;  // one statement (~290 bytes) fits, two do not
  MoveCatchup catchup(source, target, std::move(c));
  const BinlogPosition stop = script.back().end;
  ASSERT_TRUE(test::runToEnd(catchup.runUntil(stop)).has_value());
  EXPECT_EQ(target.transactions, 2);
  EXPECT_EQ(catchup.progress().applied, stop);
  // The first batch was sent when the second transaction came: it applied
  // through the first transaction's end only (checked by a failing second).
  ScriptedSource again(script);
  FakeTable failing;
  failing.fail_on = "X'62";
  auto c2 = config();
  c2.batch_bytes = 300;
  MoveCatchup second(again, failing, std::move(c2));
  ASSERT_FALSE(test::runToEnd(second.runUntil(stop)).has_value());
  EXPECT_EQ(second.progress().applied, first_end);
  EXPECT_EQ(failing.rows.size(), 1u);
}

TEST(MoveCatchup, DeletesNameEachKeyAsARangeAndStaySmall) {
  // "(a, b) IN ((x, y))" with one tuple scans the whole table on MariaDB
  // 10.11; an OR of key equalities is a range; about 32 KiB of keys at most
  // per DELETE (a few hundred: the range optimizer's memory).
  std::vector<std::vector<BinlogValue>> images;
  for (int i = 0; i < 2000; ++i) images.push_back(row(5, i, "x"));
  auto event = std::get<BinlogRowsEvent>(rows(K::kDelete, images).body);
  auto out = catchupStatements(event, config());
  ASSERT_TRUE(out.has_value());
  ASSERT_GE(out->sql.size(), 2u);
  EXPECT_TRUE(out->sql[0].starts_with("DELETE FROM `im`.`msg_05_new` WHERE (`conv_id` = 5 AND `id` = 0) OR "
                                      "(`conv_id` = 5 AND `id` = 1) OR "))
      << out->sql[0].substr(0, 200);
  size_t keys = 0;
  for (const auto& sql : out->sql) {
    EXPECT_LE(sql.size(), (32u << 10) + 100);
    for (size_t at = 0; (at = sql.find("(`conv_id` = ", at)) != std::string::npos; ++at) ++keys;
  }
  EXPECT_EQ(keys, 2000u);
  EXPECT_TRUE(out->sql.back().ends_with("(`conv_id` = 5 AND `id` = 1999)"));
  EXPECT_EQ(out->rows, 2000u);
}

TEST(MoveCatchup, MergedStatementsKeepTheOrderOfKinds) {
  // insert, delete, insert again of one key in three source transactions:
  // three statements (kinds alternate), the row exists at the end.
  ScriptedSource source({gtid(), rows(K::kInsert, {row(5, 1, "a")}), commit(),
                         gtid(), rows(K::kInsert, {row(5, 2, "b")}), commit(),
                         gtid(), rows(K::kDelete, {row(5, 1, "a")}), commit(),
                         gtid(), rows(K::kDelete, {row(5, 2, "b")}), commit(),
                         gtid(), rows(K::kInsert, {row(5, 1, "c")}), commit()});
  FakeTable target;
  ASSERT_TRUE(runAll(source, target, {kFile, next_pos}).has_value());
  EXPECT_EQ(target.log, (std::vector<std::string>{
                            "START TRANSACTION",
                            "REPLACE INTO `im`.`msg_05_new` (`conv_id`, `id`, `body`) VALUES (5, 1, X'61'), (5, 2, X'62')",
                            "DELETE FROM `im`.`msg_05_new` WHERE (`conv_id` = 5 AND `id` = 1) OR (`conv_id` = 5 AND `id` = 2)",
                            "REPLACE INTO `im`.`msg_05_new` (`conv_id`, `id`, `body`) VALUES (5, 1, X'63')",
                            "COMMIT"}));
  EXPECT_EQ(target.rows, table({{"5", "1", "X'63'"}}));
}

TEST(MoveCatchup, ABatchIsOneMultiStatementText) {
  EXPECT_EQ(catchupTransactionSql({"REPLACE INTO t VALUES (1)", "DELETE FROM t WHERE (a) IN ((2))"}, true),
            "SET time_zone = '+00:00';START TRANSACTION;REPLACE INTO t VALUES (1);DELETE FROM t WHERE (a) IN "
            "((2));COMMIT");
  EXPECT_EQ(catchupTransactionSql({"DELETE FROM t WHERE (a) IN ((2))"}, false),
            "START TRANSACTION;DELETE FROM t WHERE (a) IN ((2));COMMIT");
}

TEST(MoveCatchup, StopsOnDdlOfTheMovingTable) {
  ScriptedSource source({gtid(), at(protocol::BinlogQueryEvent{"im", "ALTER TABLE msg_07 ADD COLUMN x INT"}),
                         gtid(), at(protocol::BinlogQueryEvent{"im", "ALTER TABLE `MSG_05` ADD COLUMN x INT"})});
  FakeTable target;
  auto r = runAll(source, target, {kFile, next_pos});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().find("DDL on im.msg_05"), std::string::npos) << r.error();
  EXPECT_EQ(source.consumed(), 4u);
}

TEST(MoveCatchup, RollsBackAndReportsATargetFailure) {
  ScriptedSource source({gtid(), rows(K::kInsert, {row(5, 1, "a")}), rows(K::kDelete, {row(5, 1, "a")}), commit()});
  FakeTable target;
  target.fail_on = "DELETE";
  auto r = runAll(source, target, {kFile, next_pos});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error(), "catch-up target: 1205: lock wait timeout");
  EXPECT_EQ(target.log.back(), "ROLLBACK");
  EXPECT_TRUE(target.rows.empty());
}

TEST(MoveCatchup, RefusesRowsItCannotApplyExactly) {
  auto event = std::get<BinlogRowsEvent>(rows(K::kInsert, {row(5, 1, "a")}).body);
  auto c = config();
  auto no_names = event;
  no_names.column_names.clear();
  EXPECT_NE(catchupStatements(no_names, c).error().find("binlog_row_metadata=FULL"), std::string::npos);
  auto partial = event;
  partial.full_images = false;
  EXPECT_NE(catchupStatements(partial, c).error().find("binlog_row_image=FULL"), std::string::npos);
  auto no_pk = event;
  no_pk.primary_key.clear();
  EXPECT_NE(catchupStatements(no_pk, c).error().find("no primary key"), std::string::npos);
  c.primary_key = {"id"};  // given explicitly: used instead of the TABLE_MAP's
  auto by_id = catchupStatements(no_pk, c);
  ASSERT_TRUE(by_id.has_value());
  c.filter.key_column = "peer_id";
  EXPECT_NE(catchupStatements(event, c).error().find("key column peer_id"), std::string::npos);
}

}  // namespace
}  // namespace sp::proxy
