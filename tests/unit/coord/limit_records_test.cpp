#include "coord/limit_records.hpp"

#include <gtest/gtest.h>

namespace sp::coord {
namespace {

TEST(LimitRecords, KeysSortInsideTheWatchedRange) {
  // The fleet agent watches [prefix/fence/, prefix/map]: every proxy must
  // see a limit set on another one.
  const std::string prefix = "/shardproxy/";
  for (const std::string& key : {limitKey(prefix, "user", "app"), limitKey(prefix, "digest", "SELECT ? /* x */")}) {
    EXPECT_GT(key, std::string("/shardproxy/fence/")) << key;
    EXPECT_LT(key, std::string("/shardproxy/map")) << key;
    EXPECT_TRUE(isLimitKey(prefix, key)) << key;
  }
  EXPECT_EQ(limitKey("/sp//", "user", "app"), "/sp/limits/user/YXBw");
  // '/' of a digest stays inside the key's last part.
  EXPECT_EQ(limitKey("/sp", "digest", "a/b"), "/sp/limits/digest/YS9i");
  EXPECT_FALSE(isLimitKey("/sp", "/sp/map"));
  EXPECT_FALSE(isLimitKey("/sp", "/sp/ha/leader"));
}

TEST(LimitRecords, EncodesAndDecodes) {
  const LimitRecord record{"digest", "SELECT * FROM msg WHERE conv_id = ?", 50, 4, "admin:root@p1",
                           "2026-12-04 17:00:00"};
  const std::string json = encodeLimitRecord(record);
  EXPECT_EQ(json,
            R"j({"kind":"digest","name":"SELECT * FROM msg WHERE conv_id = ?","max_per_second":50,)j"
            R"j("max_concurrent":4,"set_by":"admin:root@p1","set_at":"2026-12-04 17:00:00"})j");
  auto back = decodeLimitRecord(json);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->kind, "digest");
  EXPECT_EQ(back->name, record.name);
  EXPECT_EQ(back->max_per_second, 50u);
  EXPECT_EQ(back->max_concurrent, 4u);
  EXPECT_EQ(back->set_by, "admin:root@p1");
  // A removed rule is a record with both limits 0.
  auto removed = decodeLimitRecord(R"({"kind":"user","name":"app"})");
  ASSERT_TRUE(removed) << removed.error();
  EXPECT_EQ(removed->max_per_second, 0u);
  EXPECT_EQ(removed->max_concurrent, 0u);
}

TEST(LimitRecords, MalformedRecordsAreRefusedWithWhatIsWrong) {
  EXPECT_EQ(decodeLimitRecord(R"({"kind":"host","name":"x"})").error(),
            "malformed statement limit record in etcd: 'kind' is neither user nor digest");
  EXPECT_EQ(decodeLimitRecord(R"({"kind":"user"})").error(), "malformed statement limit record in etcd: no 'name'");
  EXPECT_EQ(decodeLimitRecord(R"({"kind":"user","name":"a","max_per_second":-1})").error(),
            "malformed statement limit record in etcd: 'max_per_second' has the wrong type");
  EXPECT_EQ(decodeLimitRecord(R"({"kind":"user","name":"a","max_concurrent":"4"})").error(),
            "malformed statement limit record in etcd: 'max_concurrent' has the wrong type");
  EXPECT_EQ(decodeLimitRecord("not json").error(), "malformed statement limit record in etcd");
}

}  // namespace
}  // namespace sp::coord
