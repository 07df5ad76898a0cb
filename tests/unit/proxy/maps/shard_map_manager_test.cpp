// The reload decision and the manager's lifecycle without sockets: start-up
// from the file or the cache, RELOAD (applied, unchanged, refused with every
// problem and the running map untouched), ROLLBACK, and backend changes read
// from the config file. No workers are attached, so no pools are touched.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "conf/config.hpp"
#include "proxy/maps/shard_map_manager.hpp"

namespace sp::proxy {
namespace {

namespace fs = std::filesystem;

std::string mapText(uint64_t version, std::string_view s0_buckets = "0-1", std::string_view s1_buckets = "2-3",
                     std::string_view s1_backend = "db1") {
  return "version: " + std::to_string(version) +
         "\ntables:\n"
         "  chan:\n"
         "    key: peer_id\n"
         "    method: bucket\n"
         "    key_prefix: \"channel:\"\n"
         "    buckets: 4\n"
         "    table: \"chan_{shard}\"\n"
         "    shards:\n"
         "      s0: {buckets: \"" + std::string(s0_buckets) + "\", backend: db0}\n"
         "      s1: {buckets: \"" + std::string(s1_buckets) + "\", backend: " + std::string(s1_backend) + "}\n";
}

std::shared_ptr<const routing::CompiledShardMap> compile(const std::string& text) {
  std::vector<std::string> names{"db0", "db1"};
  auto map = routing::compileShardMap(text, names);
  EXPECT_TRUE(map.has_value()) << (map ? "" : routing::formatShardMapIssues(map.error(), "map"));
  return map ? *map : nullptr;
}

TEST(DecideSwap, FirstMapIsApplied) {
  auto m = compile(mapText(1));
  EXPECT_EQ(decideSwap(nullptr, *m, false).verdict, SwapVerdict::kApply);
}

TEST(DecideSwap, IdenticalMapIsANoOpWhateverItsFormatting) {
  auto a = compile(mapText(3));
  auto b = compile("# a comment\n" + mapText(3));
  auto d = decideSwap(a.get(), *b, false);
  EXPECT_EQ(d.verdict, SwapVerdict::kUnchanged);
  EXPECT_NE(d.message.find("unchanged"), std::string::npos) << d.message;
  EXPECT_EQ(decideSwap(a.get(), *b, true).verdict, SwapVerdict::kUnchanged);
}

TEST(DecideSwap, ReloadNeedsAGreaterVersion) {
  auto running = compile(mapText(3));
  auto same_version = compile(mapText(3, "0", "1-3"));
  auto lower = compile(mapText(2, "0", "1-3"));
  auto higher = compile(mapText(4, "0", "1-3"));
  auto d = decideSwap(running.get(), *same_version, false);
  EXPECT_EQ(d.verdict, SwapVerdict::kRefused);
  EXPECT_NE(d.message.find("greater than the running version 3"), std::string::npos) << d.message;
  EXPECT_EQ(decideSwap(running.get(), *lower, false).verdict, SwapVerdict::kRefused);
  EXPECT_EQ(decideSwap(running.get(), *higher, false).verdict, SwapVerdict::kApply);
}

TEST(DecideSwap, RollbackMayGoLower) {
  auto running = compile(mapText(4, "0", "1-3"));
  auto older = compile(mapText(3));
  EXPECT_EQ(decideSwap(running.get(), *older, true).verdict, SwapVerdict::kApply);
}

conf::BackendConfig backend(std::string name, std::string host, uint16_t port) {
  conf::BackendConfig b;
  b.name = std::move(name);
  b.address = {std::move(host), port};
  b.user = "proxy";
  return b;
}

TEST(DiffBackends, AddedRemovedChangedAndTheDefaultBackend) {
  std::vector<conf::BackendConfig> running{backend("db0", "127.0.0.1", 3307), backend("db1", "127.0.0.1", 3308)};
  auto same = diffBackends(running, running, "db0");
  EXPECT_TRUE(same.added.empty() && same.removed.empty() && same.problems.empty());

  auto next = running;
  next.push_back(backend("db2", "127.0.0.1", 3309));
  auto added = diffBackends(running, next, "db0");
  ASSERT_EQ(added.added.size(), 1u);
  EXPECT_EQ(added.added[0].name, "db2");
  EXPECT_TRUE(added.removed.empty());

  auto removed = diffBackends(running, {running[0]}, "db0");
  EXPECT_EQ(removed.removed, std::vector<std::string>{"db1"});
  EXPECT_TRUE(removed.problems.empty());

  auto moved = running;
  moved[1].address.port = 3310;
  auto changed = diffBackends(running, moved, "db0");
  EXPECT_EQ(changed.removed, std::vector<std::string>{"db1"});
  ASSERT_EQ(changed.added.size(), 1u);
  EXPECT_EQ(changed.added[0].address.port, 3310);

  auto no_default = diffBackends(running, {running[1]}, "db0");
  ASSERT_EQ(no_default.problems.size(), 1u);
  EXPECT_NE(no_default.problems[0].find("default backend 'db0'"), std::string::npos);
}

class ManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sp-manager-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string mapPath() const { return (dir_ / "map.yaml").string(); }
  std::string cachePath() const { return (dir_ / "cache" / "maps.sqlite").string(); }
  void writeMap(const std::string& text) { std::ofstream(mapPath(), std::ios::trunc) << text; }

  // A context as Server builds it; source_path empty: reloads keep the backends.
  std::unique_ptr<ProxyContext> context() {
    auto ctx = std::make_unique<ProxyContext>();
    ctx->config().backends = {backend("db0", "127.0.0.1", 3307), backend("db1", "127.0.0.1", 3308)};
    ctx->config().default_backend = "db0";
    ctx->config().shard_map_path = mapPath();
    ctx->config().cache_path = cachePath();
    return ctx;
  }
  fs::path dir_;
};

TEST_F(ManagerTest, StartsFromTheFileAndCachesIt) {
  writeMap(mapText(1));
  auto ctx = context();
  ShardMapManager maps(*ctx);
  ASSERT_EQ(maps.startup(), "");
  auto map = ctx->shard_map.load();
  ASSERT_TRUE(map);
  EXPECT_EQ(map->version(), 1u);
  auto history = maps.history();
  ASSERT_TRUE(history.has_value());
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ((*history)[0].applied_by, "startup");
  EXPECT_EQ((*history)[0].checksum, map->checksum());
  EXPECT_EQ((*history)[0].source_text, mapText(1));
  // A restart with the same file does not add a row.
  ShardMapManager again(*ctx);
  ASSERT_EQ(again.startup(), "");
  EXPECT_EQ(again.history()->size(), 1u);
}

TEST_F(ManagerTest, MissingOrInvalidFileFallsBackToTheNewestCachedMap) {
  writeMap(mapText(1));
  {
    auto ctx = context();
    ShardMapManager maps(*ctx);
    ASSERT_EQ(maps.startup(), "");
    writeMap(mapText(2, "0", "1-3"));
    ASSERT_EQ(maps.reload("admin:admin").verdict, SwapVerdict::kApply);
  }
  fs::remove(mapPath());
  {
    auto ctx = context();
    ShardMapManager maps(*ctx);
    ASSERT_EQ(maps.startup(), "");
    ASSERT_TRUE(ctx->shard_map.load());
    EXPECT_EQ(ctx->shard_map.load()->version(), 2u);
  }
  writeMap("version: 3\ntables: [oops\n");
  {
    auto ctx = context();
    ShardMapManager maps(*ctx);
    ASSERT_EQ(maps.startup(), "");
    EXPECT_EQ(ctx->shard_map.load()->version(), 2u);
  }
}

TEST_F(ManagerTest, MissingFileAndNoCacheIsFatal) {
  auto ctx = context();
  ShardMapManager maps(*ctx);
  auto err = maps.startup();
  EXPECT_NE(err.find("holds no map"), std::string::npos) << err;
  EXPECT_FALSE(ctx->shard_map.load());
}

TEST_F(ManagerTest, CorruptCacheWithAGoodFileIsNotFatal) {
  fs::create_directories(dir_ / "cache");
  std::ofstream(cachePath()) << "garbage garbage garbage garbage garbage garbage garbage garbage garbage garbage";
  writeMap(mapText(1));
  auto ctx = context();
  ShardMapManager maps(*ctx);
  ASSERT_EQ(maps.startup(), "");
  EXPECT_EQ(ctx->shard_map.load()->version(), 1u);
  ASSERT_TRUE(maps.hasCache());
  EXPECT_EQ(maps.history()->size(), 1u);
  int aside = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "cache")) {
    aside += e.path().filename().string().find(".corrupt-") != std::string::npos;
  }
  EXPECT_EQ(aside, 1);
}

TEST_F(ManagerTest, ReloadAppliesRefusesAndSaysWhenNothingChanged) {
  writeMap(mapText(1));
  auto ctx = context();
  ShardMapManager maps(*ctx);
  ASSERT_EQ(maps.startup(), "");
  auto v1 = ctx->shard_map.load();

  auto same = maps.reload("admin:admin");
  EXPECT_EQ(same.verdict, SwapVerdict::kUnchanged);
  EXPECT_EQ(ctx->shard_map.load(), v1);  // the very same object: nothing was swapped

  writeMap(mapText(2, "0", "1-3"));
  auto applied = maps.reload("sighup");
  EXPECT_EQ(applied.verdict, SwapVerdict::kApply);
  EXPECT_EQ(applied.old_version, 1u);
  EXPECT_EQ(applied.new_version, 2u);
  EXPECT_EQ(ctx->shard_map.load()->version(), 2u);
  EXPECT_EQ(ctx->shard_map.load()->findTable("chan")->bucket_to_shard[1], 1u);  // bucket 1 moved to s1
  auto v2 = ctx->shard_map.load();

  writeMap(mapText(2, "0-1", "2-3"));  // different content, same version
  auto stale = maps.reload("admin:admin");
  EXPECT_EQ(stale.verdict, SwapVerdict::kRefused);
  ASSERT_EQ(stale.problems.size(), 1u);
  EXPECT_NE(stale.problems[0].find("greater than the running version 2"), std::string::npos);
  EXPECT_EQ(ctx->shard_map.load(), v2);

  // Several problems at once: overlap, an unknown backend; all reported, map untouched.
  writeMap(mapText(3, "0-2", "2-3", "db9"));
  auto invalid = maps.reload("admin:admin");
  EXPECT_EQ(invalid.verdict, SwapVerdict::kRefused);
  EXPECT_GE(invalid.problems.size(), 2u);
  std::string all;
  for (const auto& p : invalid.problems) all += p + "\n";
  EXPECT_NE(all.find("db9"), std::string::npos) << all;
  EXPECT_NE(all.find("map.yaml:"), std::string::npos) << all;  // file:line
  EXPECT_EQ(ctx->shard_map.load(), v2);
  EXPECT_EQ(maps.lastProblems(), invalid.problems);

  auto history = maps.history();
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].version, 2u);
  EXPECT_EQ((*history)[0].applied_by, "sighup");
}

// Two writers deriving the next map (two moves' cut-overs) each see the map
// the other published: versions 2 then 3, never both 2 with the second refused.
TEST_F(ManagerTest, DerivedMapsAreReadAndPublishedUnderOneLock) {
  writeMap(mapText(1));
  auto ctx = context();
  ShardMapManager maps(*ctx);
  ASSERT_EQ(maps.startup(), "");
  auto next = [](std::string_view s0, std::string_view s1) {
    return [s0, s1](const routing::CompiledShardMap& in_force) -> std::expected<std::string, std::string> {
      return mapText(in_force.version() + 1, s0, s1);
    };
  };
  auto first = maps.publishDerived(next("0", "1-3"), "move:1", "move 1");
  EXPECT_EQ(first.verdict, SwapVerdict::kApply) << first.message;
  EXPECT_EQ(first.new_version, 2u);
  auto second = maps.publishDerived(next("0-1", "2-3"), "move:2", "move 2");
  EXPECT_EQ(second.verdict, SwapVerdict::kApply) << second.message;
  EXPECT_EQ(second.old_version, 2u);
  EXPECT_EQ(second.new_version, 3u);
  // What the derivation refuses is refused with its reason; the map stays.
  auto refused = maps.publishDerived(
      [](const routing::CompiledShardMap&) -> std::expected<std::string, std::string> {
        return std::unexpected(std::string("the map in force no longer allows the move"));
      },
      "move:3", "move 3");
  EXPECT_EQ(refused.verdict, SwapVerdict::kRefused);
  ASSERT_EQ(refused.problems.size(), 1u);
  EXPECT_EQ(refused.problems[0], "the map in force no longer allows the move");
  EXPECT_EQ(ctx->shard_map.load()->version(), 3u);
}

TEST_F(ManagerTest, RollbackReappliesACachedVersionEvenIfLower) {
  writeMap(mapText(1));
  auto ctx = context();
  ShardMapManager maps(*ctx);
  ASSERT_EQ(maps.startup(), "");
  auto v1_checksum = ctx->shard_map.load()->checksum();
  writeMap(mapText(2, "0", "1-3"));
  ASSERT_EQ(maps.reload("admin:admin").verdict, SwapVerdict::kApply);

  auto back = maps.rollback(1, "admin:ops");
  EXPECT_EQ(back.verdict, SwapVerdict::kApply);
  EXPECT_EQ(ctx->shard_map.load()->version(), 1u);
  EXPECT_EQ(ctx->shard_map.load()->checksum(), v1_checksum);
  EXPECT_EQ(maps.rollback(1, "admin:ops").verdict, SwapVerdict::kUnchanged);
  auto missing = maps.rollback(7, "admin:ops");
  EXPECT_EQ(missing.verdict, SwapVerdict::kRefused);
  EXPECT_NE(missing.problems[0].find("not in the cache"), std::string::npos);
  auto history = maps.history();
  ASSERT_EQ(history->size(), 3u);
  EXPECT_EQ((*history)[0].note, "rollback to 1");
  EXPECT_EQ((*history)[0].applied_by, "admin:ops");
  // After a rollback, the file's version 2 is greater again: RELOAD re-applies it.
  EXPECT_EQ(maps.reload("admin:admin").verdict, SwapVerdict::kApply);
}

class ManagerConfigTest : public ManagerTest {
 protected:
  std::string configPath() const { return (dir_ / "proxy.yaml").string(); }
  void writeConfig(const std::string& extra_backends) {
    std::ofstream(configPath(), std::ios::trunc)
        << "server:\n  listen: 127.0.0.1:16999\n"
           "users:\n  - {name: app, password: app_pw}\n"
           "backends:\n"
           "  - {name: db0, address: 127.0.0.1:3307, user: proxy, password: p}\n"
           "  - {name: db1, address: 127.0.0.1:3308, user: proxy, password: p}\n"
        << extra_backends << "shard_map: map.yaml\ndefault_backend: db0\ncache: cache/maps.sqlite\n";
  }
};

TEST_F(ManagerConfigTest, ReloadFollowsTheConfigBackends) {
  writeConfig("");
  writeMap(mapText(1));
  auto config = conf::loadConfig(configPath());
  ASSERT_TRUE(config.has_value()) << conf::formatIssues(config.error(), "cfg");
  ProxyContext ctx;
  ctx.config() = *config;
  ShardMapManager maps(ctx);
  ASSERT_EQ(maps.startup(), "");

  // A map naming db2 before the config defines it is refused.
  writeMap(mapText(2, "0-1", "2-3", "db2"));
  auto early = maps.reload("admin:admin");
  EXPECT_EQ(early.verdict, SwapVerdict::kRefused);
  EXPECT_EQ(ctx.shard_map.load()->version(), 1u);

  // Config and map together: the backend is added and the map applied.
  writeConfig("  - {name: db2, address: 127.0.0.1:3309, user: proxy, password: p}\n");
  auto both = maps.reload("admin:admin");
  EXPECT_EQ(both.verdict, SwapVerdict::kApply);
  EXPECT_EQ(both.backends_added, std::vector<std::string>{"db2"});
  EXPECT_EQ(ctx.shard_map.load()->findTable("chan")->shards[1].backend, "db2");

  // Removing db2 while the map still uses it is refused.
  writeConfig("");
  EXPECT_EQ(maps.reload("admin:admin").verdict, SwapVerdict::kRefused);

  // A new backend that does not resolve is refused, with its name.
  writeConfig("  - {name: db2, address: 127.0.0.1:3309, user: proxy, password: p}\n"
              "  - {name: db3, address: 'no-such-host.invalid:3306', user: proxy, password: p}\n");
  auto unresolved = maps.reload("admin:admin");
  EXPECT_EQ(unresolved.verdict, SwapVerdict::kRefused);
  ASSERT_FALSE(unresolved.problems.empty());
  EXPECT_NE(unresolved.problems[0].find("db3"), std::string::npos) << unresolved.problems[0];

  // A config with a typo is refused with the key path.
  std::ofstream(configPath(), std::ios::app) << "backendz: []\n";
  auto typo = maps.reload("admin:admin");
  EXPECT_EQ(typo.verdict, SwapVerdict::kRefused);
  std::string all;
  for (const auto& p : typo.problems) all += p + "\n";
  EXPECT_NE(all.find("backendz"), std::string::npos) << all;
  EXPECT_EQ(ctx.shard_map.load()->version(), 2u);
}

}  // namespace
}  // namespace sp::proxy
