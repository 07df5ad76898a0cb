// `server:` of the configuration (docs/configuration.md): listeners, client
// limits and timeouts, client TLS.
// Its own header (conf/config.hpp holds the whole configuration): a file
// that reads only this section includes only this.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "conf/host_port.hpp"

namespace sp::conf {

struct ServerConfig {
  HostPort listen{"127.0.0.1", 6033};
  std::optional<HostPort> admin_listen;   // bound by the shard-map lifecycle work
  bool admin_allow_remote = false;        // accept admin logins from non-loopback peers (still admin_users only)
  std::optional<HostPort> metrics_listen; // Prometheus /metrics over HTTP; absent = off
  bool metrics_allow_remote = false;      // answer scrapes from non-loopback peers
  unsigned threads = 0;                   // 0 = number of cores
  uint32_t max_connections = 10000;
  uint32_t max_packet_bytes = 64u << 20;
  uint32_t shutdown_grace_ms = 10000;     // SIGTERM: wait this long for in-flight statements
  // Before authentication (hostile clients: docs/configuration.md).
  uint32_t handshake_timeout_ms = 10000;       // login must complete within this, else the socket is closed
  uint32_t max_handshake_packet_bytes = 16384; // largest packet accepted before login
  uint32_t max_connections_per_host = 0;       // client connections from one address; 0 = no limit
  uint32_t wait_timeout_s = 28800;             // an idle logged-in session is closed after this
  uint32_t interactive_timeout_s = 28800;      // the same, for clients that log in with CLIENT_INTERACTIVE
  uint32_t net_write_timeout_s = 60;           // a client that takes no bytes for this long while we write is closed
  uint32_t net_read_timeout_s = 30;            // a client sending a LOAD DATA LOCAL file that stalls this long is cut
  std::string log_level = "info";         // trace|debug|info|warn|error|critical|off
  // TLS for clients (application and admin ports): PEM files, absolute after
  // loading; both or neither. Re-read on SIGHUP (docs/security.md, "TLS").
  std::string tls_cert;
  std::string tls_key;
  // Protocol versions offered to clients (MariaDB's tls_version): TLS 1.2
  // and/or 1.3; older ones are never offered.
  bool tls_v12 = true;
  bool tls_v13 = true;
  // OpenSSL cipher names (MariaDB's ssl_cipher): TLS 1.3 suites (TLS_...)
  // and TLS 1.2 ciphers in one colon-separated list; empty = OpenSSL's defaults.
  std::string tls_ciphers;
  // PEM CA bundle client certificates are verified against (MariaDB's
  // ssl_ca); empty = clients are not asked for one. Needs tls_cert.
  std::string tls_ca;
  bool tlsEnabled() const { return !tls_cert.empty(); }
};

}  // namespace sp::conf
