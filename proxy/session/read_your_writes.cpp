#include "proxy/session/read_your_writes.hpp"

namespace sp::proxy {

void ReadYourWrites::afterPrimaryStatement(std::string_view backend, const protocol::SessionChanges& changes,
                                           bool tracked, bool in_transaction, bool may_write) {
  std::optional<Gtid> reported;
  for (const auto& v : changes.variables) {
    if (v.name != "last_gtid" || v.value.empty()) continue;
    // The last one counts (a multi-statement reports each commit in turn).
    if (auto g = parseGtid(v.value)) reported = g;
  }
  auto it = marks_.find(backend);
  if (it == marks_.end()) {
    if (!reported && !may_write) return;  // nothing written, nothing to wait for
    it = marks_.emplace(std::string(backend), Mark{}).first;
  }
  Mark& mark = it->second;
  if (reported) {
    // GTIDs of one primary only grow: this one covers every earlier write.
    mark.gtid = reported;
    mark.unknown_write = false;
    mark.open_transaction_write = in_transaction && may_write;
  } else if (!tracked) {
    // The server says nothing of what it wrote: only the primary is sure.
    if (may_write) mark.unknown_write = true;
  } else if (in_transaction) {
    // Its writes get their GTID at COMMIT, which reports it.
    if (may_write) mark.open_transaction_write = true;
  } else {
    // The transaction ended without a GTID: a rollback or a read-only commit.
    mark.open_transaction_write = false;
  }
}

void ReadYourWrites::markPending(std::string_view backend) {
  auto it = marks_.find(backend);
  if (it == marks_.end()) it = marks_.emplace(std::string(backend), Mark{}).first;
  it->second.unknown_write = true;
}

ReadYourWrites::Requirement ReadYourWrites::requirement(std::string_view backend) const {
  auto it = marks_.find(backend);
  if (it == marks_.end()) return {};
  return {it->second.unknown_write || it->second.open_transaction_write, it->second.gtid};
}

}  // namespace sp::proxy
