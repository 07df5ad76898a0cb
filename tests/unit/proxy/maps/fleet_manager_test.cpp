// The shard-map manager in a fleet (issue 19), with a fake FleetLink: a
// reload is published before it is applied (refused when the publication
// fails, nothing changed), maps from the fleet apply whatever their version,
// and a fleet member starts from its cache rather than its file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "conf/config.hpp"
#include "proxy/maps/shard_map_manager.hpp"

namespace sp::proxy {
namespace {

namespace fs = std::filesystem;

std::string fleetMapText(uint64_t version, std::string_view s1_buckets = "2-3") {
  return "version: " + std::to_string(version) +
         "\ntables:\n  chan:\n    key: peer_id\n    method: bucket\n    buckets: 4\n    table: \"chan_{shard}\"\n"
         "    shards:\n      s0: {buckets: \"0-1\", backend: db0}\n      s1: {buckets: \"" +
         std::string(s1_buckets) + "\", backend: db1}\n";
}

conf::BackendConfig fleetBackend(const std::string& name, uint16_t port) {
  conf::BackendConfig b;
  b.name = name;
  b.address = {"127.0.0.1", port};
  b.user = "proxy";
  return b;
}

// Records publications; fails them on demand.
class FakeFleet : public FleetLink {
 public:
  std::string fail_with;
  int64_t next_revision = 10;
  std::vector<std::pair<uint64_t, int64_t>> published;  // version, expected revision
  std::vector<std::pair<uint64_t, int64_t>> applied_calls;

  std::expected<int64_t, std::string> publish(const routing::CompiledShardMap& map, int64_t expected_revision,
                                              const std::string&, const std::string&,
                                              const coord::EtcdGuard*) override {
    if (!fail_with.empty()) return std::unexpected(fail_with);
    published.emplace_back(map.version(), expected_revision);
    return ++next_revision;
  }
  void applied(const routing::CompiledShardMap& map, int64_t revision) override {
    applied_calls.emplace_back(map.version(), revision);
  }
};

class FleetManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sp-fleet-manager-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ctx_.config().backends = {fleetBackend("db0", 3307), fleetBackend("db1", 3308)};
    ctx_.config().default_backend = "db0";
    ctx_.config().shard_map_path = (dir_ / "map.yaml").string();
    ctx_.config().cache_path = (dir_ / "cache.sqlite").string();
    ctx_.config().fleet = conf::FleetConfig{};
  }
  void TearDown() override { fs::remove_all(dir_); }
  void writeMap(const std::string& text) { std::ofstream(dir_ / "map.yaml", std::ios::trunc) << text; }

  fs::path dir_;
  ProxyContext ctx_;
};

TEST_F(FleetManagerTest, ReloadIsPublishedWithTheRevisionLastAppliedThenApplied) {
  writeMap(fleetMapText(1));
  ShardMapManager maps(ctx_);
  ASSERT_EQ(maps.startup(), "");
  FakeFleet fleet;
  maps.attachFleet(&fleet);
  ASSERT_EQ(maps.applyFromFleet({fleetMapText(1), "p2 startup", "first map of the fleet", 7}).verdict, SwapVerdict::kUnchanged);
  EXPECT_EQ(maps.fleetRevision(), 7);
  writeMap(fleetMapText(2, "1-3"));  // invalid: bucket 1 twice
  EXPECT_EQ(maps.reload("admin:a").verdict, SwapVerdict::kRefused);
  EXPECT_TRUE(fleet.published.empty()) << "a refused map is never published";
  writeMap(fleetMapText(2, "2"));  // bucket 3 unmapped
  EXPECT_EQ(maps.reload("admin:a").verdict, SwapVerdict::kRefused);
  writeMap(fleetMapText(2));
  auto out = maps.reload("admin:a");
  ASSERT_EQ(out.verdict, SwapVerdict::kApply) << out.message;
  ASSERT_EQ(fleet.published.size(), 1u);
  EXPECT_EQ(fleet.published[0], (std::pair<uint64_t, int64_t>{2, 7}));
  EXPECT_EQ(maps.fleetRevision(), 11);
  EXPECT_EQ(ctx_.shard_map.load()->version(), 2u);
  EXPECT_EQ(fleet.applied_calls.back(), (std::pair<uint64_t, int64_t>{2, 11}));
  // The same map again: nothing to publish.
  EXPECT_EQ(maps.reload("admin:a").verdict, SwapVerdict::kUnchanged);
  EXPECT_EQ(fleet.published.size(), 1u);
}

TEST_F(FleetManagerTest, AFailedPublicationChangesNothing) {
  writeMap(fleetMapText(1));
  ShardMapManager maps(ctx_);
  ASSERT_EQ(maps.startup(), "");
  FakeFleet fleet;
  fleet.fail_with = "the coordination store (etcd) is unreachable, nothing was published: ...";
  maps.attachFleet(&fleet);
  auto running = ctx_.shard_map.load();
  writeMap(fleetMapText(2));
  auto out = maps.reload("admin:a");
  ASSERT_EQ(out.verdict, SwapVerdict::kRefused);
  ASSERT_EQ(out.problems.size(), 1u);
  EXPECT_EQ(out.problems[0], "fleet: " + fleet.fail_with);
  EXPECT_EQ(ctx_.shard_map.load(), running);
  EXPECT_EQ(maps.history()->size(), 1u);
  EXPECT_EQ(maps.rollback(1, "admin:a").verdict, SwapVerdict::kUnchanged);  // already in force: nothing to publish
}

TEST_F(FleetManagerTest, FleetMapsApplyWhateverTheirVersionAndRefuseWhatDoesNotValidate) {
  writeMap(fleetMapText(5));
  ShardMapManager maps(ctx_);
  ASSERT_EQ(maps.startup(), "");
  FakeFleet fleet;
  maps.attachFleet(&fleet);
  auto lower = maps.applyFromFleet({fleetMapText(3), "p1 admin:a", "rollback to 3", 20});
  EXPECT_EQ(lower.verdict, SwapVerdict::kApply);
  EXPECT_EQ(ctx_.shard_map.load()->version(), 3u);
  EXPECT_TRUE(fleet.published.empty()) << "a map from the fleet is not published again";
  auto history = maps.history();
  EXPECT_EQ((*history)[0].applied_by, "fleet:p1 admin:a");
  EXPECT_EQ((*history)[0].note, "rollback to 3");
  auto bad = maps.applyFromFleet({"version: 9\ntables: {x: {}}\n", "p1 admin:a", "reload", 21});
  EXPECT_EQ(bad.verdict, SwapVerdict::kRefused);
  EXPECT_EQ(ctx_.shard_map.load()->version(), 3u);
  EXPECT_EQ(maps.fleetRevision(), 20);
}

TEST_F(FleetManagerTest, AFleetMemberStartsFromItsCacheNotItsFile) {
  writeMap(fleetMapText(1));
  {
    ShardMapManager maps(ctx_);
    ASSERT_EQ(maps.startup(), "");
    ASSERT_EQ(maps.applyFromFleet({fleetMapText(4), "p2 admin:a", "reload", 30}).verdict, SwapVerdict::kApply);
  }
  writeMap(fleetMapText(9));
  ProxyContext again;
  again.config() = ctx_.config();
  ShardMapManager maps(again);
  ASSERT_EQ(maps.startup(), "");
  EXPECT_EQ(again.shard_map.load()->version(), 4u);
  again.config().fleet.reset();  // alone, the file wins as before
  ShardMapManager alone(again);
  ASSERT_EQ(alone.startup(), "");
  EXPECT_EQ(again.shard_map.load()->version(), 9u);
}

}  // namespace
}  // namespace sp::proxy
