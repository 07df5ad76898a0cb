// ARCHIVE <table> OLDER THAN <n> DAYS | BEFORE '<time>' for tables with
// `archive:` in the shard map (msg): on every shard, rows older than the
// cutoff move from the hot table to the archive table (created LIKE the hot
// one when absent) in primary-key batches of archive.batch_rows, each batch
// one transaction whose INSERT and DELETE counts must be equal (else rolled
// back and retried), archive.pause_ms apart. Progress per shard is saved in
// the SQLite file after every batch (archive_store.hpp), so the same command
// resumes a run that stopped. SHOW ARCHIVES lists it.
#pragma once
#include <expected>
#include <string>

#include "proxy/lifecycle/lifecycle_command.hpp"
#include "proxy/net/local_result.hpp"
#include "proxy/net/net.hpp"
#include "proxy/core/proxy_context.hpp"

namespace sp::proxy {

awaitable<std::expected<LocalResult, std::string>> archiveRows(ProxyContext& context, const LifecycleCommand& command);

// SHOW ARCHIVES: every run row of the SQLite file, newest first.
std::expected<LocalResult, std::string> showArchives(const ProxyContext& context);

}  // namespace sp::proxy
