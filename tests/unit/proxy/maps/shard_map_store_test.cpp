// The SQLite cache of applied maps: round trip, ordering, lookups, and a
// corrupt or foreign file set aside instead of failing.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "proxy/maps/shard_map_store.hpp"

namespace sp::proxy {
namespace {

namespace fs = std::filesystem;

class ShardMapStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sp-store-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path() const { return (dir_ / "sub" / "maps.sqlite").string(); }
  std::vector<fs::path> setAside() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_ / "sub")) {
      if (e.path().filename().string().find(".corrupt-") != std::string::npos) out.push_back(e.path());
    }
    return out;
  }
  static CachedShardMap row(uint64_t version, std::string checksum, std::string who) {
    CachedShardMap m;
    m.version = version;
    m.checksum = std::move(checksum);
    m.source_text = "version: " + std::to_string(version) + "\ntables: {}\n";
    m.applied_by = std::move(who);
    m.note = "reload";
    return m;
  }
  fs::path dir_;
};

TEST_F(ShardMapStoreTest, CreatesParentDirectoryAndSchema) {
  ShardMapStore::OpenReport report;
  auto store = ShardMapStore::open(path(), &report);
  ASSERT_TRUE(store.has_value()) << store.error();
  EXPECT_TRUE(report.created);
  EXPECT_TRUE(report.set_aside_path.empty());
  EXPECT_TRUE(fs::exists(path()));
  auto newest = (*store)->newest();
  ASSERT_TRUE(newest.has_value());
  EXPECT_FALSE(newest->has_value());
}

TEST_F(ShardMapStoreTest, SaveListNewestAndFindVersionSurviveReopening) {
  {
    auto store = ShardMapStore::open(path());
    ASSERT_TRUE(store.has_value());
    auto a = (*store)->save(row(1, "aaa", "startup"));
    ASSERT_TRUE(a.has_value()) << a.error();
    EXPECT_GT(a->id, 0);
    EXPECT_EQ(a->applied_at.size(), 20u) << a->applied_at;  // 2026-11-30T10:21:07Z
    ASSERT_TRUE((*store)->save(row(2, "bbb", "admin:admin")).has_value());
    ASSERT_TRUE((*store)->save(row(1, "aaa", "admin:admin")).has_value());  // a rollback re-applies 1
  }
  ShardMapStore::OpenReport report;
  auto store = ShardMapStore::open(path(), &report);
  ASSERT_TRUE(store.has_value());
  EXPECT_FALSE(report.created);
  auto all = (*store)->list();
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].version, 1u);  // newest first
  EXPECT_EQ((*all)[0].applied_by, "admin:admin");
  EXPECT_EQ((*all)[1].version, 2u);
  EXPECT_EQ((*all)[1].checksum, "bbb");
  EXPECT_EQ((*all)[1].source_text, "version: 2\ntables: {}\n");
  EXPECT_EQ((*all)[2].applied_by, "startup");
  EXPECT_GT((*all)[0].id, (*all)[1].id);
  auto limited = (*store)->list(2);
  ASSERT_TRUE(limited.has_value());
  EXPECT_EQ(limited->size(), 2u);
  auto newest = (*store)->newest();
  ASSERT_TRUE(newest.has_value() && newest->has_value());
  EXPECT_EQ((*newest)->id, (*all)[0].id);
  auto two = (*store)->findVersion(2);
  ASSERT_TRUE(two.has_value() && two->has_value());
  EXPECT_EQ((*two)->checksum, "bbb");
  auto one = (*store)->findVersion(1);
  ASSERT_TRUE(one.has_value() && one->has_value());
  EXPECT_EQ((*one)->applied_by, "admin:admin");  // the most recent row of that version
  auto missing = (*store)->findVersion(9);
  ASSERT_TRUE(missing.has_value());
  EXPECT_FALSE(missing->has_value());
}

TEST_F(ShardMapStoreTest, SourceTextWithQuotesAndNewlinesIsKeptExactly) {
  auto store = ShardMapStore::open(path());
  ASSERT_TRUE(store.has_value());
  auto m = row(5, "c", "sighup");
  m.source_text = std::string("a: 'it''s'\n\"b\": \\x00\n") + std::string(1, '\0') + "tail";
  ASSERT_TRUE((*store)->save(m).has_value());
  auto back = (*store)->findVersion(5);
  ASSERT_TRUE(back.has_value() && back->has_value());
  EXPECT_EQ((*back)->source_text, m.source_text);
}

TEST_F(ShardMapStoreTest, AFileThatIsNotSqliteIsSetAsideAndReplaced) {
  fs::create_directories(dir_ / "sub");
  {
    std::ofstream f(path(), std::ios::binary);
    f << "this is not a database, it is a text file that is long enough to have a header............";
  }
  ShardMapStore::OpenReport report;
  auto store = ShardMapStore::open(path(), &report);
  ASSERT_TRUE(store.has_value()) << store.error();
  EXPECT_FALSE(report.set_aside_path.empty());
  EXPECT_FALSE(report.problem.empty());
  EXPECT_TRUE(report.created);
  auto aside = setAside();
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(aside[0].string(), report.set_aside_path);
  std::ifstream old(report.set_aside_path);
  std::string first;
  old >> first;
  EXPECT_EQ(first, "this");  // the operator's file is kept, untouched
  EXPECT_TRUE((*store)->save(row(1, "x", "startup")).has_value());
}

TEST_F(ShardMapStoreTest, ASqliteDatabaseWithAnotherSchemaIsSetAside) {
  fs::create_directories(dir_ / "sub");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE other(x INTEGER); INSERT INTO other VALUES (1);", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  ShardMapStore::OpenReport report;
  auto store = ShardMapStore::open(path(), &report);
  ASSERT_TRUE(store.has_value()) << store.error();
  EXPECT_NE(report.problem.find("applied_shard_maps"), std::string::npos) << report.problem;
  EXPECT_EQ(setAside().size(), 1u);
}

TEST_F(ShardMapStoreTest, OurTableWithWrongColumnsIsSetAside) {
  fs::create_directories(dir_ / "sub");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE applied_shard_maps(version INTEGER);", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  ShardMapStore::OpenReport report;
  auto store = ShardMapStore::open(path(), &report);
  ASSERT_TRUE(store.has_value()) << store.error();
  EXPECT_NE(report.problem.find("columns"), std::string::npos) << report.problem;
  EXPECT_EQ(setAside().size(), 1u);
}

TEST_F(ShardMapStoreTest, AnEmptyFileIsANewCache) {
  fs::create_directories(dir_ / "sub");
  { std::ofstream f(path()); }
  ShardMapStore::OpenReport report;
  auto store = ShardMapStore::open(path(), &report);
  ASSERT_TRUE(store.has_value()) << store.error();
  EXPECT_TRUE(report.created);
  EXPECT_TRUE(report.set_aside_path.empty());
}

TEST_F(ShardMapStoreTest, AnUncreatableDirectoryIsAnError) {
  fs::create_directories(dir_);
  { std::ofstream f(dir_ / "sub"); }  // a file where the directory should be
  auto store = ShardMapStore::open(path());
  ASSERT_FALSE(store.has_value());
  EXPECT_NE(store.error().find("sub"), std::string::npos) << store.error();
}

}  // namespace
}  // namespace sp::proxy
