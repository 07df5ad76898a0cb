// The fenced cut-over protocol's mover side (coord/fleet_fence.hpp) over a
// fake store with leases that expire on a fake clock: three proxies that
// acknowledge, a proxy cut off from etcd (in the roster, no lease), late
// joiners, acknowledgements that die with their lease.
#include "coord/fleet_fence.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>

#include "coord/fleet_records.hpp"

namespace sp::coord {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
const std::string kPrefix = "/shardproxy/t";
const auto kTtl = std::chrono::duration_cast<Clock::duration>(3s);

// etcd as the fence sees it: keys, revisions, leases that expire, an outage switch.
class FakeStore : public FenceStore {
 public:
  Clock::time_point now{};
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
  void advance(Clock::duration d) {
    now += d;
    expire();
  }
  std::expected<int64_t, std::string> put(const std::string& key, const std::string& value, int64_t lease) override {
    expire();
    if (down) return std::unexpected("etcd unreachable");
    if (lease != 0 && !leases_.contains(lease)) return std::unexpected("lease not found");
    kv_[key] = {value, lease};
    return ++revision_;
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
  std::expected<void, std::string> removePrefix(const std::string& prefix) override {
    if (down) return std::unexpected("etcd unreachable");
    std::erase_if(kv_, [&](const auto& e) { return e.first.starts_with(prefix); });
    ++revision_;
    return {};
  }
  bool has(const std::string& key) const { return kv_.contains(key); }

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
  std::map<int64_t, Clock::time_point> leases_;
  int64_t next_lease_ = 0;
  int64_t revision_ = 0;
};

// A proxy as the store sees it: its roster key, its leased member record, its acknowledgements.
struct Proxy {
  std::string name;
  int64_t lease = 0;
  explicit Proxy(std::string n) : name(std::move(n)) {}

  void join(FakeStore& store, int64_t map_revision = 0) {
    lease = store.grant();
    ASSERT_TRUE(store.put(rosterKey(kPrefix, name), name, 0));
    MemberRecord m;
    m.name = name;
    m.map_revision = map_revision;
    ASSERT_TRUE(store.put(memberKey(kPrefix, name), encodeMemberRecord(m), lease));
  }
  bool ack(FakeStore& store, int64_t epoch) { return store.put(fenceAckKey(kPrefix, epoch, name), "holding", lease).has_value(); }
};

FenceKeys bucket17() {
  FenceKeys k;
  k.table = "chan";
  k.buckets = {17};
  return k;
}

std::expected<int64_t, std::string> publishAt(int64_t revision) { return revision; }

TEST(FleetFence, SwitchWaitsForEveryLiveProxy) {
  FakeStore store;
  Proxy a("a"), b("b"), c("c");
  for (auto* p : {&a, &b, &c}) p->join(store);
  FenceCoordinator mover(kPrefix);
  auto epoch = mover.allocateEpoch(store);
  ASSERT_TRUE(epoch);
  ASSERT_TRUE(mover.begin(store, *epoch, bucket17(), "a", a.lease));
  ASSERT_TRUE(a.ack(store, *epoch));
  ASSERT_TRUE(b.ack(store, *epoch));
  bool published = false;
  auto early = mover.switchWhenReady(store, *epoch, [&] {
    published = true;
    return publishAt(42);
  });
  ASSERT_FALSE(early);
  EXPECT_FALSE(published);
  EXPECT_NE(early.error().find("from c"), std::string::npos) << early.error();

  ASSERT_TRUE(c.ack(store, *epoch));
  auto switched = mover.switchWhenReady(store, *epoch, [&] {
    published = true;
    return publishAt(42);
  });
  ASSERT_TRUE(switched) << switched.error();
  EXPECT_TRUE(published);
  EXPECT_TRUE(store.has(fenceSwitchedKey(kPrefix, *epoch)));
  ASSERT_TRUE(mover.lift(store, *epoch));
  EXPECT_FALSE(store.has(fenceRequestKey(kPrefix, *epoch)));
  EXPECT_FALSE(store.has(fenceAckKey(kPrefix, *epoch, "c")));
}

TEST(FleetFence, AProxyCutOffFromEtcdBlocksTheSwitchUntilItIsBack) {
  FakeStore store;
  Proxy a("a"), b("b");
  a.join(store);
  b.join(store);
  // b is cut off (its keepalives fail) while a keeps its lease: b's lease
  // expires, but b may still write with the map it has.
  for (int i = 0; i < 4; ++i) {
    store.advance(1s);
    ASSERT_TRUE(store.keepAlive(a.lease));
  }
  FenceCoordinator mover(kPrefix);
  ASSERT_TRUE(mover.begin(store, 7, bucket17(), "a", a.lease));
  ASSERT_TRUE(a.ack(store, 7));
  auto p = mover.progress(store, 7);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->live, std::vector<std::string>{"a"});
  EXPECT_EQ(p->cut_off, std::vector<std::string>{"b"});
  EXPECT_FALSE(p->ready());
  auto refused = mover.switchWhenReady(store, 7, [] { return publishAt(9); });
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("roster without a lease"), std::string::npos) << refused.error();
  // b comes back (a new lease), sees the open fence and acknowledges.
  b.join(store);
  ASSERT_TRUE(b.ack(store, 7));
  EXPECT_TRUE(mover.switchWhenReady(store, 7, [] { return publishAt(9); }));
}

TEST(FleetFence, AnAcknowledgementDiesWithItsLease) {
  FakeStore store;
  Proxy a("a"), b("b");
  a.join(store);
  b.join(store);
  FenceCoordinator mover(kPrefix);
  ASSERT_TRUE(mover.begin(store, 2, bucket17(), "a", a.lease));
  ASSERT_TRUE(a.ack(store, 2));
  ASSERT_TRUE(b.ack(store, 2));
  ASSERT_TRUE(mover.progress(store, 2)->ready());
  store.advance(2s);
  ASSERT_TRUE(store.keepAlive(a.lease));
  store.advance(2s);  // b's lease expires: its member record and its acknowledgement with it
  auto p = mover.progress(store, 2);
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->ready());
  EXPECT_EQ(p->cut_off, std::vector<std::string>{"b"});
  // A restarted b acknowledges under its new lease.
  Proxy b2("b");
  b2.join(store);
  ASSERT_TRUE(b2.ack(store, 2));
  EXPECT_TRUE(mover.progress(store, 2)->ready());
}

TEST(FleetFence, ALateJoinerMustAcknowledgeBeforeTheSwitch) {
  FakeStore store;
  Proxy a("a");
  a.join(store);
  FenceCoordinator mover(kPrefix);
  ASSERT_TRUE(mover.begin(store, 4, bucket17(), "a", a.lease));
  ASSERT_TRUE(a.ack(store, 4));
  // d registers between the acknowledgements and the switch.
  Proxy d("d");
  d.join(store);
  auto refused = mover.switchWhenReady(store, 4, [] { return publishAt(1); });
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("from d"), std::string::npos) << refused.error();
}

TEST(FleetFence, NoSwitchWhileEtcdIsDown) {
  FakeStore store;
  Proxy a("a");
  a.join(store);
  FenceCoordinator mover(kPrefix);
  ASSERT_TRUE(mover.begin(store, 5, bucket17(), "a", a.lease));
  ASSERT_TRUE(a.ack(store, 5));
  store.down = true;
  bool published = false;
  EXPECT_FALSE(mover.switchWhenReady(store, 5, [&] {
    published = true;
    return publishAt(1);
  }));
  EXPECT_FALSE(published);
}

TEST(FleetFence, RequestDiesWithTheMoversLease) {
  FakeStore store;
  Proxy a("a");
  a.join(store);
  FenceCoordinator mover(kPrefix);
  ASSERT_TRUE(mover.begin(store, 6, bucket17(), "a", a.lease));
  store.advance(4s);
  EXPECT_FALSE(store.has(fenceRequestKey(kPrefix, 6)));
}

TEST(FleetFence, NotServingListsProxiesBehindTheSwitch) {
  FakeStore store;
  Proxy a("a"), b("b");
  a.join(store, 30);
  b.join(store, 12);
  FenceCoordinator mover(kPrefix);
  auto behind = mover.notServing(store, 30);
  ASSERT_TRUE(behind);
  EXPECT_EQ(*behind, std::vector<std::string>{"b"});
}

TEST(FleetFence, RequestRecordsRoundTrip) {
  FenceKeys in;
  in.table = "chan";
  in.buckets = {17, 3};
  in.bucket_count = 64;
  in.prefix_crc = 0xdeadbeef;
  in.staying_keys = {9, 4};
  in.source_table = "chan_s01";
  auto keys = decodeFenceRequest(encodeFenceRequest(in, "a"));
  ASSERT_TRUE(keys) << keys.error();
  EXPECT_EQ(keys->buckets, (std::vector<uint32_t>{3, 17}));
  EXPECT_EQ(keys->staying_keys, (std::vector<uint64_t>{4, 9}));
  EXPECT_EQ(keys->prefix_crc, 0xdeadbeefu);
  EXPECT_EQ(keys->bucket_count, 64u);
  EXPECT_EQ(keys->source_table, "chan_s01");
  EXPECT_TRUE(keys->holds("chan", 17));
  EXPECT_FALSE(keys->holds("chan", 18));
  FenceKeys shard;
  shard.table = "msg";
  shard.kind = "shard";
  shard.shard = 1;
  shard.shard_count = 4;
  auto s = decodeFenceRequest(encodeFenceRequest(shard, "b"));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, "shard");
  EXPECT_EQ(s->shard_count, 4u);
  EXPECT_FALSE(decodeFenceRequest(R"({"table":"chan","buckets":[-1]})"));
  EXPECT_FALSE(decodeFenceRequest(R"({"buckets":[1]})"));
  EXPECT_FALSE(decodeFenceRequest(R"({"table":"chan","buckets":[],"kind":"range"})"));
  EXPECT_FALSE(decodeFenceRequest(R"({"table":"chan","buckets":[],"shard":4294967296})"));
  EXPECT_EQ(fenceAckPrefix("/p/", 3), "/p/fence/3/ack/");
}

TEST(FleetFence, FenceKeysAsAWatcherSeesThem) {
  using K = FenceKeyRef::Kind;
  auto r = parseFenceKey("/p", "/p/fence/12/request");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->epoch, 12);
  EXPECT_EQ(r->kind, K::kRequest);
  EXPECT_EQ(parseFenceKey("/p", "/p/fence/12/switched")->kind, K::kSwitched);
  EXPECT_EQ(parseFenceKey("/p", "/p/fence/12/ack/p2")->kind, K::kAck);
  EXPECT_FALSE(parseFenceKey("/p", "/p/map"));
  EXPECT_FALSE(parseFenceKey("/p", "/p/fence/x/request"));
  EXPECT_FALSE(parseFenceKey("/p", "/p/fence/12"));
  EXPECT_FALSE(parseFenceKey("/p", "/p/fence/-3/request"));
}

}  // namespace
}  // namespace sp::coord
