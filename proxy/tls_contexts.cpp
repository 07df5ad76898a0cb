#include "proxy/tls_contexts.hpp"

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

std::expected<TlsContextPtr, std::string> makeServerContext(const std::string& cert, const std::string& key) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  error_code ec;
  ctx->set_options(kOptions, ec);
  ctx->use_certificate_chain_file(cert, ec);
  if (ec) return std::unexpected(describe("server.tls_cert", cert, ec));
  ctx->use_private_key_file(key, ssl::context::pem, ec);
  if (ec) return std::unexpected(describe("server.tls_key", key, ec));
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return std::unexpected(fmt::format("server.tls_key '{}' does not belong to the certificate in '{}'", key, cert));
  }
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
  if (!enabled()) return {};
  return reload();
}

std::string ServerTls::reload() {
  if (!enabled()) return {};
  auto ctx = makeServerContext(cert_path_, key_path_);
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
