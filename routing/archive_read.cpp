#include "routing/archive_read.hpp"

#include <algorithm>

#include "routing/conditions.hpp"

namespace sp::routing {

void readHotAndCold(std::string_view sql, const StatementRefs& refs, std::string_view logical, const Shard& shard,
                    std::vector<TextEdit>& edits) {
  if (shard.archive_table.empty()) return;
  for (const auto& use : refs.tables) {
    // alias is null for INSERT/DELETE targets: only tables read in a FROM get the union.
    if (!use.alias || !equalsIgnoreCase(use.name->table.value, logical)) continue;
    const parser::TableName& name = *use.name;
    std::string db = name.db.empty() ? std::string() : std::string(name.db.range.text(sql)) + ".";
    std::string text = "(SELECT * FROM " + db + "`" + shard.physical_table + "` UNION ALL SELECT * FROM " + db + "`" +
                       shard.archive_table + "`)";
    if (use.alias->empty()) text += " AS `" + shard.physical_table + "`";
    std::erase_if(edits, [&](const TextEdit& e) { return e.begin == name.table.range.begin; });
    edits.push_back({name.range.begin, name.table.range.end, std::move(text)});
  }
}

}  // namespace sp::routing
