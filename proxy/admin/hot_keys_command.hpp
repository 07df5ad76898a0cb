// SHOW HOT KEYS [LIMIT n] on the admin port (docs/admin.md, "Hot keys"):
// the busiest shard-key values over the last seconds (hot_key_tracker.hpp),
// busiest first, with their share of their shard's statements and the
// writes the serialiser holds or queues for them now (hot_key_gate.hpp).
#pragma once
#include <cstdint>

#include "proxy/net/local_result.hpp"

namespace sp::proxy {

struct ProxyContext;

inline constexpr uint64_t kHotKeysDefaultLimit = 20;

// `limit` 0: kHotKeysDefaultLimit rows.
LocalResult showHotKeys(const ProxyContext& context, uint64_t limit);

}  // namespace sp::proxy
