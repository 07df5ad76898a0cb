// `transactions:` of the configuration (docs/configuration.md,
// "transactions"; docs/routing.md, "Transactions across backends"): what a
// transaction that needs a second backend does, and how the proxy heals the
// XA branches a crash left prepared. Its own header (conf/config.hpp holds
// the whole configuration).
#pragma once
#include <cstdint>
#include <string>

namespace sp::conf {

enum class CrossBackend : uint8_t {
  kRefuse,  // a transaction stays on its first backend (9120 for a statement on another)
  kAtomic,  // BEGIN opens an XA branch; a second backend joins; COMMIT is two-phase
};

struct TransactionsConfig {
  CrossBackend cross_backend = CrossBackend::kAtomic;  // issue 35: atomic once fleets recover too
  // How often prepared branches of this proxy's global ids (XA RECOVER on
  // every backend) are resolved from the decision log (etcd in a fleet);
  // also once at start-up.
  uint32_t recovery_interval_ms = 2000;
  // The start of every global id this proxy creates (letters, digits, '_');
  // recovery touches only branches whose id starts with it. Two proxies
  // alone sharing backends need different prefixes; the members of a fleet
  // share one (their ids carry the member name, and each finishes the
  // branches of members that are gone).
  std::string xid_prefix = "sp";
  // The SQLite file of commit decisions (synchronous=FULL); empty: next to
  // `cache`, as <cache>.xa. In a fleet, decisions go to etcd instead.
  std::string decision_log;
};

}  // namespace sp::conf
