#include "proxy/schema/schema_change_rows.hpp"

#include <fmt/format.h>

namespace sp::proxy {

TableCounts countsOf(const SchemaChangeRecord& r) {
  TableCounts c;
  for (const auto& t : r.tables) {
    c.seconds += t.seconds;
    switch (t.state) {
      case TableChangeState::kDone:
      case TableChangeState::kAlready: ++c.changed; break;
      case TableChangeState::kAbsent: ++c.absent; break;
      case TableChangeState::kFailed: ++c.failed; break;
      case TableChangeState::kPending: ++c.pending; break;
    }
  }
  return c;
}

LocalResult changesResult(const std::vector<ChangeRow>& rows) {
  LocalResult out;
  out.columns = {"id",        "table_name", "kind",       "state",      "tables",     "changed", "absent",
                 "failed",    "pending",    "seconds",    "message",    "statement",  "created_by",
                 "created_at", "updated_at", "proxy",     "claimed",    "adopted_by"};
  for (const auto& row : rows) {
    const SchemaChangeRecord& r = *row.record;
    const TableCounts c = countsOf(r);
    out.rows.push_back({std::to_string(r.id), r.table, r.kind, std::string(toString(r.state)),
                        std::to_string(r.tables.size()), std::to_string(c.changed), std::to_string(c.absent),
                        std::to_string(c.failed), std::to_string(c.pending), fmt::format("{:.3f}", c.seconds),
                        r.message, r.statement, r.created_by, r.created_at, r.updated_at, row.proxy, row.claimed,
                        row.adopted_by});
  }
  return out;
}

LocalResult tablesResult(const SchemaChangeRecord& record) {
  LocalResult out;
  out.columns = {"backend", "table_name", "role", "state", "algorithm", "seconds", "error"};
  for (const auto& t : record.tables) {
    out.rows.push_back({t.backend, t.table, t.role, std::string(toString(t.state)), t.algorithm,
                        fmt::format("{:.3f}", t.seconds), t.error});
  }
  return out;
}

}  // namespace sp::proxy
