// The `transactions:` section (docs/configuration.md, "transactions"):
// cross-backend transactions and the recovery of their XA branches.
#include <fmt/format.h>

#include "conf/field_readers.hpp"
#include "conf/sections.hpp"

namespace sp::conf::detail {
namespace {

constexpr std::string_view kCrossBackend[] = {"refuse", "atomic"};
// An XA gtrid holds at most 64 bytes: the prefix leaves room for "-<boot>-<n>".
constexpr size_t kMaxPrefix = 24;

bool validPrefix(std::string_view s) {
  if (s.empty() || s.size() > kMaxPrefix) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

struct TransactionsEntry {
  TransactionsConfig& txn;
  const std::string& base_dir;
};

const FieldSpec<TransactionsEntry> kTransactionsFields[] = {
    {"cross_backend", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, TransactionsEntry& e) {
       if (auto choice = w.readChoice(v, p, kCrossBackend)) {
         e.txn.cross_backend = *choice == "atomic" ? CrossBackend::kAtomic : CrossBackend::kRefuse;
       }
     }},
    {"recovery_interval_ms", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, TransactionsEntry& e) {
       assign(w.readUInt(v, p, 100, 3'600'000), e.txn.recovery_interval_ms);
     }},
    {"xid_prefix", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, TransactionsEntry& e) {
       auto text = w.readString(v, p, NullIs::kMissing, false);
       if (!text) return;
       if (!validPrefix(*text)) {
         w.report(p, v, fmt::format("'{}': 1 to {} letters, digits or '_'", *text, kMaxPrefix));
         return;
       }
       e.txn.xid_prefix = std::move(*text);
     }},
    {"decision_log", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, TransactionsEntry& e) {
       if (auto s = w.readString(v, p, NullIs::kEmpty, true)) e.txn.decision_log = resolvePath(e.base_dir, *s);
     }},
};

}  // namespace

void readTransactions(Walker& w, const YAML::Node& v, const std::string& p, Document& d) {
  if (v.IsNull()) return;
  TransactionsEntry entry{d.config.transactions, d.base_dir};
  readMapping<TransactionsEntry>(w, v, p, kTransactionsFields, entry);
}

}  // namespace sp::conf::detail
