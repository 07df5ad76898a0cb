#include "proxy/net/tls_contexts.hpp"

#include <boost/asio/ssl/context.hpp>
#include <fmt/format.h>

#include <map>
#include <mutex>
#include <tuple>

namespace sp::proxy {

namespace ssl = boost::asio::ssl;
using boost::system::error_code;

namespace {

// TLS 1.2 and 1.3 only: what MariaDB 10.11 and every maintained driver speak.
constexpr auto kOptions = ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                          ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use;

std::string describe(std::string_view what, const std::string& path, const error_code& ec) {
  return fmt::format("{} '{}': {}", what, path, ec.message());
}

// server.tls_version and server.tls_ciphers. MariaDB takes TLS 1.3 suites and
// TLS 1.2 ciphers in one list (ssl_cipher): so does the proxy, splitting it
// for OpenSSL's two calls. A list that leaves nothing usable is refused here
// rather than failing every handshake later.
std::string applyClientOffer(ssl::context& ctx, const ServerTlsOffer& offer) {
  SSL_CTX* native = ctx.native_handle();
  SSL_CTX_set_min_proto_version(native, offer.v12 ? TLS1_2_VERSION : TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(native, offer.v13 ? TLS1_3_VERSION : TLS1_2_VERSION);
  if (offer.ciphers.empty()) return {};
  std::string suites, ciphers;
  size_t start = 0;
  while (start < offer.ciphers.size()) {
    size_t colon = offer.ciphers.find(':', start);
    if (colon == std::string::npos) colon = offer.ciphers.size();
    std::string name = offer.ciphers.substr(start, colon - start);
    std::string& list = name.starts_with("TLS_") ? suites : ciphers;
    if (!name.empty()) list += (list.empty() ? "" : ":") + name;
    start = colon + 1;
  }
  if (offer.v13 && !suites.empty() && SSL_CTX_set_ciphersuites(native, suites.c_str()) != 1) {
    return fmt::format("server.tls_ciphers '{}': no TLS 1.3 suite in '{}' is known to OpenSSL", offer.ciphers, suites);
  }
  if (offer.v13 && suites.empty() && !offer.v12) {
    return fmt::format("server.tls_ciphers '{}' names no TLS 1.3 suite (TLS_...) and server.tls_version is TLSv1.3 "
                       "only", offer.ciphers);
  }
  if (offer.v12 && !ciphers.empty() && SSL_CTX_set_cipher_list(native, ciphers.c_str()) != 1) {
    return fmt::format("server.tls_ciphers '{}': no TLS 1.2 cipher in '{}' is known to OpenSSL", offer.ciphers, ciphers);
  }
  if (offer.v12 && ciphers.empty() && !offer.v13) {
    return fmt::format("server.tls_ciphers '{}' names no TLS 1.2 cipher and server.tls_version is TLSv1.2 only",
                       offer.ciphers);
  }
  return {};
}

// server.tls_ca, as MariaDB's ssl_ca: SSL_VERIFY_PEER without
// FAIL_IF_NO_PEER_CERT, so a client without a certificate still logs in to
// accounts that need none, and one whose certificate does not chain to the
// CA fails the handshake (OpenSSL's alert; client_certificate.hpp judges
// the accounts' requirements afterwards). The CA's names are sent in the
// CertificateRequest so clients with several certificates can pick.
std::string askForClientCertificates(ssl::context& ctx, const std::string& ca) {
  if (ca.empty()) return {};
  error_code ec;
  ctx.load_verify_file(ca, ec);
  if (ec) return describe("server.tls_ca", ca, ec);
  SSL_CTX* native = ctx.native_handle();
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(ca.c_str());
  if (names) SSL_CTX_set_client_CA_list(native, names);
  // Resumed sessions keep the verified certificate; OpenSSL refuses to
  // resume a verified session without an id context.
  static constexpr unsigned char kSessionContext[] = "shardproxy";
  SSL_CTX_set_session_id_context(native, kSessionContext, sizeof(kSessionContext) - 1);
  ctx.set_verify_mode(ssl::verify_peer | ssl::verify_client_once, ec);
  return {};
}

std::expected<TlsContextPtr, std::string> makeServerContext(const std::string& cert, const std::string& key,
                                                            const ServerTlsOffer& offer) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  error_code ec;
  ctx->set_options(kOptions, ec);
  if (auto refused = applyClientOffer(*ctx, offer); !refused.empty()) return std::unexpected(refused);
  ctx->use_certificate_chain_file(cert, ec);
  if (ec) return std::unexpected(describe("server.tls_cert", cert, ec));
  ctx->use_private_key_file(key, ssl::context::pem, ec);
  if (ec) return std::unexpected(describe("server.tls_key", key, ec));
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return std::unexpected(fmt::format("server.tls_key '{}' does not belong to the certificate in '{}'", key, cert));
  }
  if (auto refused = askForClientCertificates(*ctx, offer.client_ca); !refused.empty()) return std::unexpected(refused);
  return ctx;
}

std::expected<TlsContextPtr, std::string> makeBackendContext(const conf::BackendTls& tls) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  error_code ec;
  ctx->set_options(kOptions, ec);
  if (tls.verify) {
    if (tls.ca.empty()) {
      ctx->set_default_verify_paths(ec);
    } else {
      ctx->load_verify_file(tls.ca, ec);
    }
    if (ec) return std::unexpected(describe("tls.ca", tls.ca.empty() ? "(system store)" : tls.ca, ec));
    ctx->set_verify_mode(ssl::verify_peer, ec);
  } else {
    ctx->set_verify_mode(ssl::verify_none, ec);
  }
  if (!tls.cert.empty()) {
    ctx->use_certificate_chain_file(tls.cert, ec);
    if (ec) return std::unexpected(describe("tls.cert", tls.cert, ec));
    ctx->use_private_key_file(tls.key, ssl::context::pem, ec);
    if (ec) return std::unexpected(describe("tls.key", tls.key, ec));
  }
  return ctx;
}

}  // namespace

std::string ServerTls::load(const conf::ServerConfig& server) {
  cert_path_ = server.tls_cert;
  key_path_ = server.tls_key;
  offer_ = ServerTlsOffer{server.tls_v12, server.tls_v13, server.tls_ciphers, server.tls_ca};
  if (!enabled()) return {};
  return reload();
}

std::string ServerTls::reload() {
  if (!enabled()) return {};
  auto ctx = makeServerContext(cert_path_, key_path_, offer_);
  if (!ctx) return ctx.error();
  current_.store(std::move(*ctx));
  return {};
}

namespace {
// Keyed by the whole setting: backends with the same CA share a context.
using BackendKey = std::tuple<std::string, bool, std::string, std::string>;
std::mutex backend_mutex;
std::map<BackendKey, TlsContextPtr> backend_contexts;
}  // namespace

std::expected<TlsContextPtr, std::string> backendTlsContext(const conf::BackendTls& tls) {
  BackendKey key{tls.ca, tls.verify, tls.cert, tls.key};
  std::lock_guard lock(backend_mutex);
  if (auto it = backend_contexts.find(key); it != backend_contexts.end()) return it->second;
  auto ctx = makeBackendContext(tls);
  if (ctx) backend_contexts.emplace(std::move(key), *ctx);
  return ctx;
}

void forgetBackendTlsContexts() {
  std::lock_guard lock(backend_mutex);
  backend_contexts.clear();
}

std::string backendTlsName(const conf::BackendConfig& backend) {
  if (backend.tls && !backend.tls->server_name.empty()) return backend.tls->server_name;
  return backend.address.host;
}

}  // namespace sp::proxy
