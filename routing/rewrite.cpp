#include "routing/rewrite.hpp"

#include <algorithm>

#include "routing/conditions.hpp"

namespace sp::routing {
namespace {

TextEdit renameEdit(const parser::Identifier& id, std::string_view physical) {
  std::string name = id.quoted ? "`" + std::string(physical) + "`" : std::string(physical);
  return {id.range.begin, id.range.end, std::move(name)};
}

}  // namespace

std::string applyEdits(std::string_view sql, std::vector<TextEdit> edits) {
  // Stable: insertions at one position keep the order they were added in.
  std::stable_sort(edits.begin(), edits.end(), [](const TextEdit& a, const TextEdit& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::string out;
  size_t extra = 0;
  for (const auto& e : edits) extra += e.replacement.size();
  out.reserve(sql.size() + extra);
  uint32_t pos = 0;
  for (const auto& e : edits) {
    out.append(sql.substr(pos, e.begin - pos));
    out.append(e.replacement);
    pos = e.end;
  }
  out.append(sql.substr(pos));
  return out;
}

void renameTable(const StatementRefs& refs, std::string_view logical, std::string_view physical,
                 std::vector<TextEdit>& edits) {
  bool alias_shadows = false;
  for (const auto& use : refs.tables) {
    if (equalsIgnoreCase(use.name->table.value, logical)) edits.push_back(renameEdit(use.name->table, physical));
    if (use.alias && !use.alias->empty() && equalsIgnoreCase(use.alias->value, logical)) alias_shadows = true;
  }
  if (alias_shadows) return;
  for (const auto& use : refs.columns) {
    const parser::Identifier& qualifier = use.ref->table;
    if (!qualifier.empty() && equalsIgnoreCase(qualifier.value, logical)) {
      edits.push_back(renameEdit(qualifier, physical));
    }
  }
}

}  // namespace sp::routing
