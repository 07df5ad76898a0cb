// A replica as a server the proxy connects to: the backend's settings (pool
// sizes, timeouts, TLS, database, account) with the replica's name, address
// and, when given, its own account. One place, so that the pools and the
// replica monitor log in the same way.
#pragma once
#include "conf/config.hpp"

namespace sp::proxy {

inline conf::BackendConfig replicaServerConfig(const conf::BackendConfig& backend, const conf::ReplicaConfig& replica) {
  conf::BackendConfig out = backend;
  out.name = replica.name;
  out.address = replica.address;
  if (!replica.user.empty()) {
    out.user = replica.user;
    out.password = replica.password;
  }
  out.min_connections = 0;  // a replica's pool fills when reads come
  out.replicas.clear();
  return out;
}

}  // namespace sp::proxy
