#include "routing/schema_drift.hpp"

namespace sp::routing {

namespace {

std::string text(const std::optional<std::string>& v) { return v ? *v : std::string("NULL"); }

std::string columnText(const std::vector<std::optional<std::string>>& row) {
  std::string out = text(row[2]);
  out += row[3] && *row[3] == "NO" ? " NOT NULL" : " NULL";
  if (row[4]) out += " DEFAULT " + *row[4];
  if (row[5] && !row[5]->empty()) out += " " + *row[5];
  if (row[6]) out += " COLLATE " + *row[6];
  return out;
}

// The difference between two shapes of one table, or empty.
std::vector<std::string> differences(const TableShape& reference, const TableShape& other) {
  std::vector<std::string> out;
  std::map<std::string, std::string> ref_columns(reference.columns.begin(), reference.columns.end());
  std::map<std::string, std::string> other_columns(other.columns.begin(), other.columns.end());
  for (const auto& [name, def] : reference.columns) {
    auto it = other_columns.find(name);
    if (it == other_columns.end()) out.push_back("column " + name + " missing");
    else if (it->second != def) out.push_back("column " + name + ": " + it->second + " (reference: " + def + ")");
  }
  for (const auto& [name, def] : other.columns) {
    if (!ref_columns.count(name)) out.push_back("extra column " + name + " " + def);
  }
  if (out.empty()) {
    // Same columns: the same order too (SELECT * and INSERT without a column list depend on it).
    for (size_t i = 0; i < reference.columns.size() && i < other.columns.size(); ++i) {
      if (reference.columns[i].first != other.columns[i].first) {
        out.push_back("column order differs at position " + std::to_string(i + 1) + ": " + other.columns[i].first +
                      " (reference: " + reference.columns[i].first + ")");
        break;
      }
    }
  }
  for (const auto& [name, def] : reference.indexes) {
    auto it = other.indexes.find(name);
    if (it == other.indexes.end()) out.push_back("index " + name + " missing");
    else if (it->second != def) out.push_back("index " + name + ": " + it->second + " (reference: " + def + ")");
  }
  for (const auto& [name, def] : other.indexes) {
    if (!reference.indexes.count(name)) out.push_back("extra index " + name + " " + def);
  }
  return out;
}

}  // namespace

BackendShapes shapesFromRows(const TextRows& columns, const TextRows& indexes) {
  BackendShapes shapes;
  for (const auto& row : columns) {
    if (row.size() < 7 || !row[0] || !row[1]) continue;
    shapes[*row[0]].columns.emplace_back(*row[1], columnText(row));
  }
  for (const auto& row : indexes) {
    if (row.size() < 6 || !row[0] || !row[1]) continue;
    std::string& def = shapes[*row[0]].indexes[*row[1]];
    const bool first = def.empty();
    if (first) def = (row[2] && *row[2] == "0" ? "UNIQUE (" : "(");
    else def.pop_back();  // the ')'
    if (!first) def += ",";
    def += text(row[4]);
    if (row[5]) def += "(" + *row[5] + ")";
    def += ")";
  }
  return shapes;
}

std::vector<DriftRow> findSchemaDrift(const CompiledShardMap& map, const std::map<std::string, BackendShapes>& shapes,
                                      const std::map<std::string, std::string>& unreadable) {
  std::vector<DriftRow> out;
  for (const auto& rule : map.tables()) {
    const TableShape* reference = nullptr;
    std::string reference_name;
    for (const auto& shard : rule.shards) {
      auto backend = shapes.find(shard.backend);
      if (backend == shapes.end()) continue;
      auto table = backend->second.find(shard.physical_table);
      if (table == backend->second.end()) continue;
      reference = &table->second;
      reference_name = shard.backend + "." + shard.physical_table;
      break;
    }
    for (const auto& shard : rule.shards) {
      auto backend = shapes.find(shard.backend);
      if (backend == shapes.end()) {
        auto why = unreadable.find(shard.backend);
        out.push_back({rule.name, shard.physical_table, shard.backend,
                       "not checked: " + (why != unreadable.end() ? why->second : std::string("backend not read")),
                       reference_name});
        continue;
      }
      auto table = backend->second.find(shard.physical_table);
      if (table == backend->second.end()) {
        out.push_back({rule.name, shard.physical_table, shard.backend, "missing", reference_name});
        continue;
      }
      if (!reference || &table->second == reference) continue;
      for (auto& d : differences(*reference, table->second)) {
        out.push_back({rule.name, shard.physical_table, shard.backend, std::move(d), reference_name});
      }
    }
  }
  return out;
}

}  // namespace sp::routing
