#include "coord/schema_records.hpp"

#include <gtest/gtest.h>

namespace sp::coord {
namespace {

TEST(SchemaRecords, KeysSortOutsideTheWatchedRange) {
  // The fleet agent watches [prefix/fence/, prefix/map]: a schema record put
  // after each table must not wake every proxy's watch.
  const std::string prefix = "/shardproxy/";
  for (const std::string& key :
       {schemaClaimKey(prefix, "msg"), schemaChangeKey(prefix, "p2", 7), schemaAdoptedKey(prefix, "p2", 7)}) {
    EXPECT_GT(key, std::string("/shardproxy/map")) << key;
  }
  EXPECT_EQ(schemaClaimKey("/sp//", "msg"), "/sp/schema/claim/msg");
  EXPECT_EQ(schemaChangeKey("/sp", "proxy-2", 12), "/sp/schema/changes/proxy-2/12");
  EXPECT_EQ(schemaChangesPrefix("/sp"), "/sp/schema/changes/");
  EXPECT_EQ(schemaAdoptedKey("/sp", "p1", 4), "/sp/schema/adopted/p1/4");
}

TEST(SchemaRecords, ClaimEncodesAndDecodes) {
  const SchemaClaimRecord claim{"p1", 4, "ALTER TABLE msg ADD INDEX i (ts)", "admin:root"};
  EXPECT_EQ(encodeSchemaClaim(claim),
            R"j({"proxy":"p1","change_id":4,"statement":"ALTER TABLE msg ADD INDEX i (ts)","who":"admin:root"})j");
  auto back = decodeSchemaClaim(R"({"proxy":"p3","change_id":9,"who":"app"})");
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->proxy, "p3");
  EXPECT_EQ(back->change_id, 9);
  EXPECT_EQ(back->who, "app");
  EXPECT_EQ(decodeSchemaClaim(R"({"proxy":"p3"})")->change_id, 0);  // claimed before it was recorded
  EXPECT_EQ(decodeSchemaClaim(R"({"change_id":9})").error(),
            "malformed schema claim record in etcd: no 'proxy' or a negative 'change_id'");
  EXPECT_EQ(decodeSchemaClaim(R"({"proxy":"p3","change_id":-1})").error(),
            "malformed schema claim record in etcd: no 'proxy' or a negative 'change_id'");
  EXPECT_EQ(decodeSchemaClaim(R"({"proxy":"p3","change_id":"9"})").error(),
            "malformed schema claim record in etcd: 'change_id' has the wrong type");
  EXPECT_EQ(decodeSchemaClaim("[1]").error(), "malformed schema claim record in etcd");
}

SchemaChangeFleetRecord sample() {
  SchemaChangeFleetRecord r;
  r.proxy = "p2";
  r.id = 3;
  r.table = "msg";
  r.kind = "ALTER TABLE";
  r.statement = "ALTER TABLE msg ADD COLUMN x INT";
  r.state = "running";
  r.shapes_before = "shard\x1f(id int)\x1e";
  r.created_by = "admin:root";
  r.created_at = "2026-12-04 10:00:00";
  r.updated_at = "2026-12-04 10:00:01";
  r.tables.push_back({"db0", "msg_00", "shard", "done", "INSTANT", "", 0.25});
  r.tables.push_back({"db1", "msg_01", "shard", "failed", "", "Duplicate entry", 0});
  return r;
}

TEST(SchemaRecords, ChangeEncodesEveryField) {
  EXPECT_EQ(encodeSchemaChange(sample()),
            R"({"proxy":"p2","id":3,"table":"msg","kind":"ALTER TABLE","statement":"ALTER TABLE msg ADD COLUMN x INT",)"
            R"("state":"running","message":"","shapes_before":"shard\u001f(id int)\u001e","created_by":"admin:root",)"
            R"("created_at":"2026-12-04 10:00:00","updated_at":"2026-12-04 10:00:01",)"
            R"("tables":[{"backend":"db0","table":"msg_00","role":"shard","state":"done","algorithm":"INSTANT",)"
            R"("seconds":2.5E-1,"error":""},{"backend":"db1","table":"msg_01","role":"shard","state":"failed",)"
            R"("algorithm":"","seconds":0E0,"error":"Duplicate entry"}]})");
}

TEST(SchemaRecords, ChangeDecodesWhatWasEncoded) {
  auto back = decodeSchemaChange(encodeSchemaChange(sample()));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->proxy, "p2");
  EXPECT_EQ(back->id, 3);
  EXPECT_EQ(back->shapes_before, "shard\x1f(id int)\x1e");
  ASSERT_EQ(back->tables.size(), 2u);
  EXPECT_EQ(back->tables[0].algorithm, "INSTANT");
  EXPECT_DOUBLE_EQ(back->tables[0].seconds, 0.25);
  EXPECT_EQ(back->tables[1].error, "Duplicate entry");
  auto integer_seconds = decodeSchemaChange(
      R"({"proxy":"p","id":1,"table":"t","tables":[{"backend":"b","table":"t_0","seconds":2}]})");
  ASSERT_TRUE(integer_seconds) << integer_seconds.error();
  EXPECT_DOUBLE_EQ(integer_seconds->tables[0].seconds, 2.0);
}

TEST(SchemaRecords, ChangeRefusesMalformedRecords) {
  EXPECT_EQ(decodeSchemaChange(R"({"id":1,"table":"t"})").error(),
            "malformed schema change record in etcd: no 'proxy', 'id' or 'table'");
  EXPECT_EQ(decodeSchemaChange(R"({"proxy":"p","id":1,"table":"t","state":3})").error(),
            "malformed schema change record in etcd: 'state' has the wrong type");
  EXPECT_EQ(decodeSchemaChange(R"({"proxy":"p","id":1,"table":"t","tables":{}})").error(),
            "malformed schema change record in etcd: 'tables' has the wrong type");
  EXPECT_EQ(decodeSchemaChange(R"({"proxy":"p","id":1,"table":"t","tables":[1]})").error(),
            "malformed schema change record in etcd: a table is not an object");
  EXPECT_EQ(decodeSchemaChange(R"({"proxy":"p","id":1,"table":"t","tables":[{"table":"x"}]})").error(),
            "malformed schema change record in etcd: a table without 'backend' or 'table'");
  EXPECT_EQ(decodeSchemaChange(R"({"proxy":"p","id":1,"table":"t","tables":[{"backend":"b","table":"x",)"
                               R"("seconds":"1"}]})")
                .error(),
            "malformed schema change record in etcd: 'seconds' has the wrong type");
}

}  // namespace
}  // namespace sp::coord
