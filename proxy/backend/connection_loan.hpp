// A backend connection at one of its loans (BackendConnection::serial and
// ::loans): equal values mean the same connection with nobody else having
// borrowed it in between.
#pragma once
#include <cstdint>

namespace sp::proxy {

struct ConnectionLoan {
  uint64_t serial = 0;
  uint64_t loan = 0;
  bool operator==(const ConnectionLoan&) const = default;
};

}  // namespace sp::proxy
