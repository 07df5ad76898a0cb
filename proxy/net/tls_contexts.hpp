// OpenSSL contexts for both sides of the proxy (docs/security.md, "TLS").
// ServerTls: the certificate clients see on the application and admin ports,
// replaced as a whole on reload (SIGHUP): a new handshake takes the context in
// force, a session keeps the one it started with. Backend contexts: one per
// backends[].tls setting, built on first use and kept.
#pragma once
#include <atomic>
#include <expected>
#include <memory>
#include <string>

#include "conf/backend_config.hpp"
#include "conf/server_config.hpp"

namespace boost::asio::ssl {
class context;
}

namespace sp::proxy {

using TlsContextPtr = std::shared_ptr<boost::asio::ssl::context>;

// What clients are offered: server.tls_version and server.tls_ciphers.
struct ServerTlsOffer {
  bool v12 = true;
  bool v13 = true;
  std::string ciphers;  // empty: OpenSSL's defaults
  std::string client_ca;  // server.tls_ca: clients are asked for a certificate verified against it; empty: not asked
};

class ServerTls {
 public:
  // Reads server.tls_cert / tls_key / tls_ca (nothing when they are not set)
  // and the offer (tls_version, tls_ciphers); an error message when a file
  // is missing, unreadable, the key does not match, or no cipher is usable.
  std::string load(const conf::ServerConfig& server);
  // Reads the same files again (the CA bundle too). On failure the certificate in force stays.
  std::string reload();
  // The context for a new handshake; null when TLS is off.
  TlsContextPtr current() const { return current_.load(); }
  bool enabled() const { return !cert_path_.empty(); }

 private:
  std::string cert_path_;
  std::string key_path_;
  ServerTlsOffer offer_;
  std::atomic<TlsContextPtr> current_;
};

// A client context for connections to one backend: CA (or the system store)
// and peer verification per `tls.verify`, an optional client certificate.
std::expected<TlsContextPtr, std::string> backendTlsContext(const conf::BackendTls& tls);

// Forgets the backend contexts built so far (SIGHUP): new connections read the CA and client certificate files again.
void forgetBackendTlsContexts();

// The name a backend's certificate must carry: tls.server_name, else the host of its address.
std::string backendTlsName(const conf::BackendConfig& backend);

}  // namespace sp::proxy
