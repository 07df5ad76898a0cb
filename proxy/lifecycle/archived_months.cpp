#include "proxy/lifecycle/archived_months.hpp"

#include <algorithm>

#include "conf/config.hpp"
#include "proxy/lifecycle/archive_store.hpp"
#include "proxy/core/proxy_context.hpp"
#include "routing/archived_months.hpp"

namespace sp::proxy {

std::string loadArchivedMonths(ProxyContext& context) {
  auto next = std::make_shared<routing::ArchivedMonths>();
  if (!context.config().cache_path.empty()) {
    auto store = ArchiveStore::open(context.config().cache_path);
    if (!store) return store.error();
    auto runs = (*store)->list();
    if (!runs) return runs.error();
    for (const auto& r : *runs) {
      if (r.kind != "retention" || r.state != "done") continue;
      auto date = routing::parseDateTime(r.cutoff);
      if (!date) continue;
      auto month = routing::monthIndexOf(date->date);
      auto [it, fresh] = next->first_live.emplace(routing::lowerCaseTableName(r.table), month);
      if (!fresh) it->second = std::max(it->second, month);
    }
  }
  context.archived_months.store(std::move(next));
  return {};
}

}  // namespace sp::proxy
