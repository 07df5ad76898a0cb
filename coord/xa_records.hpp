// The commit decisions of global transactions in a fleet (issue 35,
// docs/routing.md "In a fleet"), as kept in etcd under the fleet's prefix:
//   xa/decisions/<gtrid>   one record (XaDecisionRecord, JSON), no lease: a
//                          decision outlives the proxy that wrote it
// A "commit" record is created by the deciding proxy only while its own
// member key (<prefix>/proxies/<name>) carries its lease, and only if no
// record of that id exists (etcdFencedCreateRequest). A "rollback" record is
// the tombstone recovery creates, under the same only-if-absent compare,
// before it rolls back a branch whose decision it cannot otherwise prove
// absent for good: once it exists, no commit record can be created.
// Records are deleted once no backend lists a branch of their id.
// Pure: keys, encoding and decoding only.
#pragma once
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace sp::coord {

enum class XaOutcome : uint8_t { kCommit, kRollback };

struct XaDecisionRecord {
  XaOutcome outcome = XaOutcome::kCommit;
  std::string proxy;                  // the fleet member that wrote it
  std::vector<std::string> branches;  // the branch qualifiers (backend names); empty for a rollback
  int64_t decided_unix_ms = 0;        // the writer's clock, for people (clean-up uses revisions)
};

std::string xaDecisionsPrefix(std::string_view prefix);  // "<prefix>/xa/decisions/"
std::string xaDecisionKey(std::string_view prefix, std::string_view gtrid);
// The gtrid of a decision key; empty when `key` is not one.
std::string xaDecisionGtrid(std::string_view prefix, std::string_view key);

std::string encodeXaDecision(const XaDecisionRecord& record);
// Errors name what is wrong: an outcome other than commit/rollback, no proxy.
std::expected<XaDecisionRecord, std::string> decodeXaDecision(std::string_view json);

}  // namespace sp::coord
