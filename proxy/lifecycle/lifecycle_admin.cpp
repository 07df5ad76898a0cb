#include "proxy/lifecycle/lifecycle_admin.hpp"

#include "proxy/lifecycle/msg_archiver.hpp"
#include "proxy/lifecycle/partition_admin.hpp"
#include "proxy/lifecycle/partition_archiver.hpp"
#include "proxy/lifecycle/partition_upkeep.hpp"

namespace sp::proxy {

awaitable<AdminReply> executeLifecycleCommand(const LifecycleCommand& command, ProxyContext& context,
                                              const std::string& user) {
  using K = LifecycleCommandKind;
  switch (command.kind) {
    case K::kShowPartitions: {
      auto r = co_await showPartitions(context, command.table, lifecycleMonth(command.as_of));
      if (!r) co_return AdminError{1105, "HY000", r.error()};
      co_return std::move(*r);
    }
    case K::kEnsurePartitions: {
      auto r = co_await runPartitionUpkeep(context, command.table, command.ahead, lifecycleMonth(command.as_of),
                                           "admin:" + user);
      if (!r) co_return AdminError{1105, "HY000", r.error()};
      co_return std::move(r->result);
    }
    case K::kArchiveOlderThan:
    case K::kArchiveBefore: {
      auto map = context.shard_map.load();
      const routing::TableRule* rule = map ? map->findTable(command.table) : nullptr;
      std::expected<LocalResult, std::string> r;
      if (rule && rule->month && command.before) r = co_await archiveMonths(context, command);
      else r = co_await archiveRows(context, command);
      if (!r) co_return AdminError{1105, "HY000", r.error()};
      co_return std::move(*r);
    }
    case K::kShowArchives: {
      auto r = showArchives(context);
      if (!r) co_return AdminError{1105, "HY000", r.error()};
      co_return std::move(*r);
    }
  }
  co_return AdminError{1105, "HY000", "shardproxy admin: this lifecycle command is not available in this build"};
}

}  // namespace sp::proxy
