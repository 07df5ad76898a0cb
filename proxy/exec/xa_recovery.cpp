#include "proxy/exec/xa_recovery.hpp"

#include <charconv>

#include "proxy/exec/xa_commit.hpp"

namespace sp::proxy {

namespace {

bool idText(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    // '.': fleet member names (fleet.name), part of a fleet's ids.
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                    c == '.';
    if (!ok) return false;
  }
  return true;
}

std::optional<size_t> number(const std::optional<std::string>& cell) {
  if (!cell) return std::nullopt;
  size_t v = 0;
  auto [end, ec] = std::from_chars(cell->data(), cell->data() + cell->size(), v);
  if (ec != std::errc() || end != cell->data() + cell->size()) return std::nullopt;
  return v;
}

}  // namespace

std::vector<XaListedBranch> ownBranches(const XaRecoverRows& rows, std::string_view prefix) {
  std::vector<XaListedBranch> out;
  const std::string start = std::string(prefix) + "-";
  for (const auto& row : rows) {
    if (row.size() < 4 || !row[3]) continue;
    auto format = number(row[0]);
    auto gtrid_len = number(row[1]);
    auto bqual_len = number(row[2]);
    const std::string& data = *row[3];
    if (!format || *format != 1 || !gtrid_len || !bqual_len || *gtrid_len + *bqual_len != data.size()) continue;
    XaListedBranch b{data.substr(0, *gtrid_len), data.substr(*gtrid_len)};
    if (!b.gtrid.starts_with(start) || !idText(b.gtrid) || !idText(b.bqual)) continue;
    out.push_back(std::move(b));
  }
  return out;
}

XaResolution resolveBranch(bool live, bool decided) {
  if (live) return XaResolution::kLeaveLive;
  return decided ? XaResolution::kCommit : XaResolution::kRollback;
}

std::string resolutionSql(const XaListedBranch& branch, XaResolution what) {
  switch (what) {
    case XaResolution::kLeaveLive: return {};
    case XaResolution::kCommit: return "XA COMMIT " + xaIdSql(branch.gtrid, branch.bqual);
    case XaResolution::kRollback: return "XA ROLLBACK " + xaIdSql(branch.gtrid, branch.bqual);
  }
  return {};
}

}  // namespace sp::proxy
