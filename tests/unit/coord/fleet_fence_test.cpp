// The fenced cut-over protocol (coord/fleet_fence.hpp) over a fake store
// with leases that expire on a fake clock: three proxies, a mover, lease
// loss, late joiners and resynchronisation.
#include "coord/fleet_fence.hpp"

#include <gtest/gtest.h>

#include <map>

#include "coord/fleet_records.hpp"

namespace sp::coord {
namespace {

using namespace std::chrono_literals;
const std::string kPrefix = "/shardproxy/t";
const auto kTtl = std::chrono::duration_cast<FenceClock::duration>(3s);

// etcd as the fence sees it: keys, leases that expire, an outage switch.
class FakeStore : public FenceStore {
 public:
  FenceClock::time_point now{};
  bool down = false;

  int64_t grant() {
    int64_t id = ++next_lease_;
    leases_[id] = now + kTtl;
    return id;
  }
  bool keepAlive(int64_t id) {
    expire();
    auto it = leases_.find(id);
    if (down || it == leases_.end()) return false;
    it->second = now + kTtl;
    return true;
  }
  void advance(FenceClock::duration d) {
    now += d;
    expire();
  }
  std::expected<void, std::string> put(const std::string& key, const std::string& value, int64_t lease) override {
    expire();
    if (down) return std::unexpected("etcd unreachable");
    if (lease != 0 && !leases_.contains(lease)) return std::unexpected("lease not found");
    kv_[key] = {value, lease};
    return {};
  }
  std::expected<std::vector<std::pair<std::string, std::string>>, std::string> list(const std::string& prefix) override {
    expire();
    if (down) return std::unexpected("etcd unreachable");
    std::vector<std::pair<std::string, std::string>> out;
    for (auto it = kv_.lower_bound(prefix); it != kv_.end() && it->first.starts_with(prefix); ++it) {
      out.emplace_back(it->first, it->second.first);
    }
    return out;
  }

 private:
  void expire() {
    for (auto it = leases_.begin(); it != leases_.end();) {
      if (it->second <= now) {
        std::erase_if(kv_, [&](const auto& e) { return e.second.second == it->first; });
        it = leases_.erase(it);
      } else {
        ++it;
      }
    }
  }
  std::map<std::string, std::pair<std::string, int64_t>> kv_;
  std::map<int64_t, FenceClock::time_point> leases_;
  int64_t next_lease_ = 0;
};

// A proxy: its lease, member key and fence participant.
struct Proxy {
  std::string name;
  FenceParticipant fence;
  int64_t lease = 0;
  Proxy(std::string n, LeaseLossPolicy policy = LeaseLossPolicy::kStrict)
      : name(n), fence(kPrefix, n, policy, {"chan"}) {}

  void join(FakeStore& store, const std::map<int64_t, FenceKeys>& open = {}) {
    lease = store.grant();
    ASSERT_TRUE(store.put(memberKey(kPrefix, name), "{}", lease));
    ASSERT_TRUE(fence.resynchronise(store, lease, store.now, kTtl, open));
  }
  bool keepAlive(FakeStore& store) {
    auto sent = store.now;
    if (!store.keepAlive(lease)) return false;
    fence.leaseRenewed(sent);
    return true;
  }
};

const FenceKeys kBucket17{"chan", {17}};

TEST(FleetFence, SwitchWaitsForEveryLiveProxyAndHoldsTheirWrites) {
  FakeStore store;
  Proxy a("a"), b("b"), c("c");
  for (auto* p : {&a, &b, &c}) p->join(store);
  FenceCoordinator mover(kPrefix);
  ASSERT_TRUE(mover.begin(store, 1, kBucket17, "a"));
  ASSERT_TRUE(a.fence.onRequest(store, 1, kBucket17));
  ASSERT_TRUE(b.fence.onRequest(store, 1, kBucket17));
  EXPECT_EQ(a.fence.mayWrite("chan", 17, store.now), FenceVerdict::kHeld);
  EXPECT_EQ(a.fence.mayWrite("chan", 18, store.now), FenceVerdict::kAllowed);
  EXPECT_EQ(c.fence.mayWrite("chan", 17, store.now), FenceVerdict::kAllowed);  // has not seen it yet

  bool published = false;
  auto early = mover.switchWhenReady(store, 1, [&]() -> std::expected<int64_t, std::string> {
    published = true;
    return 42;
  });
  ASSERT_FALSE(early);
  EXPECT_FALSE(published);
  EXPECT_NE(early.error().find("c"), std::string::npos) << early.error();

  ASSERT_TRUE(c.fence.onRequest(store, 1, kBucket17));
  auto switched = mover.switchWhenReady(store, 1, [&]() -> std::expected<int64_t, std::string> {
    published = true;
    return 42;
  });
  ASSERT_TRUE(switched) << switched.error();
  EXPECT_TRUE(published);
  for (auto* p : {&a, &b, &c}) {
    p->fence.onSwitched(1);
    EXPECT_EQ(p->fence.mayWrite("chan", 17, store.now), FenceVerdict::kAllowed);
  }
}

TEST(FleetFence, AProxyCutOffStopsWritingBeforeEtcdForgetsIt) {
  FakeStore store;
  Proxy a("a"), b("b");
  a.join(store);
  b.join(store);
  FenceCoordinator mover(kPrefix);
  // b is cut off from etcd (its keepalives fail) while a keeps its lease.
  for (int i = 0; i < 4; ++i) {
    store.advance(1s);
    ASSERT_TRUE(a.keepAlive(store));
  }
  // b's own deadline (last keepalive sent + TTL) passed no later than etcd's.
  EXPECT_FALSE(b.fence.synchronised(store.now));
  EXPECT_EQ(b.fence.mayWrite("chan", 17, store.now), FenceVerdict::kUnsynchronised);
  EXPECT_EQ(b.fence.mayWrite("other_table", 5, store.now), FenceVerdict::kAllowed);
  // etcd expired b too: the mover needs a alone, and no write of b can reach the old place.
  ASSERT_TRUE(mover.begin(store, 7, kBucket17, "a"));
  ASSERT_TRUE(a.fence.onRequest(store, 7, kBucket17));
  auto progress = mover.progress(store, 7);
  ASSERT_TRUE(progress);
  EXPECT_EQ(progress->live, std::vector<std::string>{"a"});
  ASSERT_TRUE(mover.switchWhenReady(store, 7, [] { return std::expected<int64_t, std::string>(9); }));
  a.fence.onSwitched(7);
  // b comes back: a new lease, the new map read, no open fence: writes again.
  b.join(store);
  EXPECT_EQ(b.fence.mayWrite("chan", 17, store.now), FenceVerdict::kAllowed);
}

TEST(FleetFence, KnownFencesPolicyRefusesOnlyHeldKeysWhenCutOff) {
  FakeStore store;
  Proxy b("b", LeaseLossPolicy::kKnownFences);
  b.join(store);
  ASSERT_TRUE(b.fence.onRequest(store, 3, kBucket17));
  store.advance(4s);
  EXPECT_EQ(b.fence.mayWrite("chan", 17, store.now), FenceVerdict::kUnsynchronised);
  EXPECT_EQ(b.fence.mayWrite("chan", 18, store.now), FenceVerdict::kAllowed);
}

TEST(FleetFence, AnAcknowledgementDiesWithItsLease) {
  FakeStore store;
  Proxy a("a"), b("b");
  a.join(store);
  b.join(store);
  FenceCoordinator mover(kPrefix);
  ASSERT_TRUE(mover.begin(store, 2, kBucket17, "a"));
  ASSERT_TRUE(a.fence.onRequest(store, 2, kBucket17));
  ASSERT_TRUE(b.fence.onRequest(store, 2, kBucket17));
  ASSERT_TRUE(mover.progress(store, 2)->ready());
  // b restarts quickly (a new lease before the old one expired): the new b
  // holds the open fence from its resynchronisation on and acknowledges
  // under its new lease, so the old lease's expiry takes nothing away.
  Proxy b2("b");
  b2.join(store, {{2, kBucket17}});
  EXPECT_EQ(b2.fence.mayWrite("chan", 17, store.now), FenceVerdict::kHeld);
  store.advance(2s);
  ASSERT_TRUE(a.keepAlive(store));
  ASSERT_TRUE(b2.keepAlive(store));
  store.advance(2s);  // the first b's lease expires
  ASSERT_TRUE(a.keepAlive(store));
  auto p = mover.progress(store, 2);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->ready()) << describeMissing(*p);  // b2 acknowledged under its own lease
}

TEST(FleetFence, ALateJoinerMustAcknowledgeBeforeTheSwitch) {
  FakeStore store;
  Proxy a("a");
  a.join(store);
  FenceCoordinator mover(kPrefix);
  ASSERT_TRUE(mover.begin(store, 4, kBucket17, "a"));
  ASSERT_TRUE(a.fence.onRequest(store, 4, kBucket17));
  // d registers between the acknowledgements and the switch, before it read the fences.
  int64_t lease = store.grant();
  ASSERT_TRUE(store.put(memberKey(kPrefix, "d"), "{}", lease));
  auto refused = mover.switchWhenReady(store, 4, [] { return std::expected<int64_t, std::string>(1); });
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("d"), std::string::npos);
}

TEST(FleetFence, NoSwitchWhileEtcdIsDownAndUnsyncedProxiesRefuse) {
  FakeStore store;
  Proxy a("a");
  a.join(store);
  FenceCoordinator mover(kPrefix);
  ASSERT_TRUE(mover.begin(store, 5, kBucket17, "a"));
  ASSERT_TRUE(a.fence.onRequest(store, 5, kBucket17));
  store.down = true;
  EXPECT_FALSE(mover.switchWhenReady(store, 5, [] { return std::expected<int64_t, std::string>(1); }));
  store.advance(4s);
  EXPECT_FALSE(a.keepAlive(store));
  a.fence.leaseLost();
  EXPECT_EQ(a.fence.mayWrite("chan", 17, store.now), FenceVerdict::kUnsynchronised);
  // A request seen without a lease is held, and acknowledged only on resynchronisation.
  EXPECT_FALSE(a.fence.onRequest(store, 6, FenceKeys{"chan", {3}}));
  EXPECT_EQ(a.fence.held().size(), 2u);
}

TEST(FleetFence, RequestRecordsRoundTrip) {
  auto keys = decodeFenceRequest(encodeFenceRequest(FenceKeys{"chan", {17, 3}}, "a"));
  ASSERT_TRUE(keys);
  EXPECT_EQ(keys->buckets, (std::vector<uint32_t>{3, 17}));
  EXPECT_FALSE(decodeFenceRequest(R"({"table":"chan","buckets":[-1]})"));
  EXPECT_FALSE(decodeFenceRequest(R"({"buckets":[1]})"));
  EXPECT_EQ(fenceAckPrefix("/p/", 3), "/p/fence/3/ack/");
}

}  // namespace
}  // namespace sp::coord
