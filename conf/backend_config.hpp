// `backends:` of the configuration (docs/configuration.md): a backend's
// address, account, pool settings, TLS and replicas.
// Its own header (conf/config.hpp holds the whole configuration): a file
// that reads only this section includes only this.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "conf/ha_config.hpp"
#include "conf/host_port.hpp"

namespace sp::conf {

// TLS from the proxy to one backend (backends[].tls). Paths absolute after loading.
struct BackendTls {
  std::string ca;           // PEM CA bundle the server certificate must chain to; empty = system store
  bool verify = true;       // check the chain and the host name; false = encrypt only
  std::string server_name;  // name the certificate must carry; empty = the address' host
  std::string cert;         // optional client certificate (PEM), with `key`
  std::string key;
  bool operator==(const BackendTls&) const = default;
};

struct BackendConfig {
  std::string name;
  HostPort address;
  std::string user;
  std::string password;
  std::string database;
  // The account that reads this backend's binlog for online moves (REPLICATION
  // SLAVE, BINLOG MONITOR); empty: `user`/`password`.
  std::string replication_user;
  std::string replication_password;
  uint32_t max_connections = 64;     // pool ceiling for this backend (all worker threads together)
  uint32_t min_connections = 0;      // kept open and warm
  // Connects (TCP + login) the pool has in flight at once, all worker
  // threads together; statements beyond wait for a connection or a slot.
  uint32_t max_connecting = 16;
  uint32_t connect_timeout_ms = 2000;
  uint32_t idle_timeout_ms = 60000;  // idle connections above min are closed after this
  uint32_t ping_interval_ms = 10000; // idle connections are health-pinged this often
  uint32_t query_timeout_ms = 0;     // 0 = none
  // Statements in flight on this server at once, all workers together; more
  // wait in its queue (overload:). 0 = no budget. Replicas inherit it unless
  // they set their own (ReplicaConfig::max_active_statements).
  uint32_t max_active_statements = 0;
  std::optional<BackendTls> tls;     // absent = plaintext
  // Servers replicating from this one (docs/availability.md); each gets its
  // own pools with this backend's pool settings, TLS and database.
  std::vector<ReplicaConfig> replicas;
};

}  // namespace sp::conf
