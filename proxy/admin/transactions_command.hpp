// SHOW TRANSACTIONS on the admin port (docs/admin.md, "Transactions"): the
// global (cross-backend, XA) transactions open in this proxy, with their
// phase and age, then the prepared branches the last recovery pass could not
// resolve (in doubt: they hold row locks on their backend).
#pragma once
#include "proxy/net/local_result.hpp"

namespace sp::proxy {

struct ProxyContext;

LocalResult showTransactions(const ProxyContext& context);

}  // namespace sp::proxy
