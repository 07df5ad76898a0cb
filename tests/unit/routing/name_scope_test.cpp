// routing/name_scope.hpp: a table name against the shard map's, as the backends resolve it.
#include <gtest/gtest.h>

#include "parser/parse.hpp"
#include "routing/name_scope.hpp"

namespace sp::routing {
namespace {

// The first table name of `SELECT * FROM <name>`.
bool resolves(const std::string& name, std::string_view mapped, const NameScope& scope) {
  static std::string sql;
  sql = "SELECT * FROM " + name;
  auto parsed = parser::parse(sql);
  EXPECT_TRUE(parsed) << sql;
  if (!parsed) return false;
  return resolvesTo(parsed->select->from.at(0)->name, mapped, scope);
}

TEST(NameScope, SchemaQualifiedAndCurrentDatabase) {
  const NameScope scope{"im", "im", true};
  EXPECT_TRUE(resolves("msg", "msg", scope));
  EXPECT_TRUE(resolves("im.msg", "msg", scope));
  EXPECT_TRUE(resolves("`im`.`msg`", "msg", scope));
  EXPECT_FALSE(resolves("other.msg", "msg", scope));
  EXPECT_FALSE(resolves("`other`.msg", "msg", scope));
  const NameScope elsewhere{"im", "other", true};
  EXPECT_FALSE(resolves("msg", "msg", elsewhere));
  EXPECT_TRUE(resolves("im.msg", "msg", elsewhere));
  const NameScope none{"im", "", true};
  EXPECT_FALSE(resolves("msg", "msg", none));
  EXPECT_TRUE(resolves("im.msg", "msg", none));
}

TEST(NameScope, LetterCaseFollowsLowerCaseTableNames) {
  const NameScope sensitive{"im", "im", true};  // lower_case_table_names = 0
  EXPECT_FALSE(resolves("MSG", "msg", sensitive));
  EXPECT_FALSE(resolves("`Msg`", "msg", sensitive));
  EXPECT_FALSE(resolves("IM.msg", "msg", sensitive));
  const NameScope insensitive{"im", "IM", false};  // 1 or 2
  EXPECT_TRUE(resolves("MSG", "msg", insensitive));
  EXPECT_TRUE(resolves("Im.Msg", "msg", insensitive));
  EXPECT_FALSE(resolves("other.MSG", "msg", insensitive));
}

TEST(NameScope, NoSchemaConfiguredComparesNamesOnly) {
  const NameScope legacy{};
  EXPECT_TRUE(resolves("other.MSG", "msg", legacy));
  EXPECT_FALSE(resolves("msg2", "msg", legacy));
}

}  // namespace
}  // namespace sp::routing
