// ARCHIVE <table> BEFORE 'YYYY-MM-01' [EXPORT ONLY] for month-partitioned
// tables (tg design, section 6: export, verify, then DROP PARTITION instead
// of long DELETEs). On every shard, each partition whose months all lie
// before the cutoff is
//   1. exported to archive.export_dir/<physical table>/<partition>.tsv
//      (LOAD DATA's default format: tab-separated, \N for NULL, backslash
//      escapes; rows in primary-key order, read in pages by key) with a
//      manifest <partition>.manifest (rows, crc32_sum, sha256);
//   2. verified: the file read back gives the same row count and the same
//      SUM(CRC32(CONCAT_WS('|', <columns>))) the server computes over the
//      partition, and its SHA-256 matches the manifest;
//   3. dropped under LOCK TABLES ... WRITE after the partition's count and
//      CRC sum are checked once more against the export: a partition with
//      rows newer than (or different from) its export is refused, never
//      dropped. An export already on disk is reused only if it still
//      matches the partition; otherwise the command refuses and says to
//      remove the old export first.
// EXPORT ONLY stops after step 2.
#pragma once
#include <expected>
#include <string>

#include "proxy/lifecycle/lifecycle_command.hpp"
#include "proxy/net/local_result.hpp"
#include "proxy/net/net.hpp"
#include "proxy/core/proxy_context.hpp"

namespace sp::proxy {

awaitable<std::expected<LocalResult, std::string>> archiveMonths(ProxyContext& context, const LifecycleCommand& command);

}  // namespace sp::proxy
