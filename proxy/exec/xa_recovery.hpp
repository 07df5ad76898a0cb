// What recovery does with the prepared XA branches a backend lists
// (XA RECOVER), pure so that it is unit-tested without servers
// (docs/routing.md, "Recovery"). Only branches of this proxy's global ids
// (<xid_prefix>-...) are touched: a registered (live) id is left to the
// commit that owns it; any other is committed when the decision log has
// its decision and rolled back when it has none.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sp::proxy {

struct XaListedBranch {
  std::string gtrid;
  std::string bqual;
};

// XA RECOVER's rows (formatID, gtrid_length, bqual_length, data) as text:
// the branches whose gtrid starts with `prefix` + '-', formatID 1, and whose
// ids are [A-Za-z0-9_.-] (anything else is not this proxy's and is left alone).
using XaRecoverRows = std::vector<std::vector<std::optional<std::string>>>;
std::vector<XaListedBranch> ownBranches(const XaRecoverRows& rows, std::string_view prefix);

enum class XaResolution : uint8_t { kLeaveLive, kCommit, kRollback };
XaResolution resolveBranch(bool live, bool decided);
// The statement carrying out `what` on `branch` (empty for kLeaveLive).
std::string resolutionSql(const XaListedBranch& branch, XaResolution what);

}  // namespace sp::proxy
