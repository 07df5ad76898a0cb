// The TLS keys of the config: backends[].tls, and the checks that span
// server.tls_* and users[].require_tls / require_x509 / require_subject /
// require_issuer (docs/configuration.md).
#include <fmt/format.h>

#include "conf/sections.hpp"

namespace sp::conf::detail {
namespace {

void readText(Walker& w, const YAML::Node& v, const std::string& p, std::string& out) {
  if (auto s = w.readString(v, p, NullIs::kEmpty, false)) out = std::move(*s);
}

const FieldSpec<BackendTls> kBackendTlsFields[] = {
    {"ca", false, [](Walker& w, const YAML::Node& v, const std::string& p, BackendTls& t) { readText(w, v, p, t.ca); }},
    {"verify", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendTls& t) { readBool(w, v, p, t.verify); }},
    {"server_name", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendTls& t) { readText(w, v, p, t.server_name); }},
    {"cert", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendTls& t) { readText(w, v, p, t.cert); }},
    {"key", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, BackendTls& t) { readText(w, v, p, t.key); }},
};

// Both or neither of a certificate and its key.
void checkPair(Walker& w, const std::string& cert, const std::string& key, const std::string& prefix,
               std::string_view cert_key, std::string_view key_key, int line) {
  if (cert.empty() == key.empty()) return;
  const auto missing = cert.empty() ? cert_key : key_key;
  const auto given = cert.empty() ? key_key : cert_key;
  w.report(prefix + std::string(missing), line, fmt::format("'{}' needs '{}' too", given, missing));
}

// require_tls needs a server certificate; a client-certificate requirement
// needs server.tls_ca too (without it no client is asked for a certificate,
// so no login of the account could ever succeed).
void checkAccountsTls(Walker& w, const std::vector<UserAccount>& users, std::string_view list,
                      const std::vector<int>& lines, const ServerConfig& server) {
  for (size_t i = 0; i < users.size(); ++i) {
    const UserAccount& u = users[i];
    const int line = i < lines.size() ? lines[i] : 0;
    if (u.require_tls && !server.tlsEnabled()) {
      w.report(fmt::format("{}[{}].require_tls", list, i), line,
               "needs server.tls_cert and server.tls_key: without them no client can log in over TLS");
    }
    if (!u.requiresCertificate() || !server.tls_ca.empty()) continue;
    const char* key = u.require_x509 ? "require_x509" : !u.require_subject.empty() ? "require_subject" : "require_issuer";
    w.report(fmt::format("{}[{}].{}", list, i, key), line,
             "needs server.tls_ca (and server.tls_cert, server.tls_key): without it clients are not asked for a "
             "certificate, so no login of this account could succeed");
  }
}

}  // namespace

void readBackendTls(Walker& w, const YAML::Node& v, const std::string& path, std::optional<BackendTls>& out) {
  if (v.IsNull()) return;  // `tls: ~`: plaintext
  BackendTls tls;
  readMapping<BackendTls>(w, v, path, kBackendTlsFields, tls);
  out = std::move(tls);
}

void resolveTlsPaths(Config& config, const std::string& base_dir) {
  config.server.tls_cert = resolvePath(base_dir, config.server.tls_cert);
  config.server.tls_key = resolvePath(base_dir, config.server.tls_key);
  config.server.tls_ca = resolvePath(base_dir, config.server.tls_ca);
  for (auto& b : config.backends) {
    if (!b.tls) continue;
    b.tls->ca = resolvePath(base_dir, b.tls->ca);
    b.tls->cert = resolvePath(base_dir, b.tls->cert);
    b.tls->key = resolvePath(base_dir, b.tls->key);
  }
}

void checkTls(Walker& w, const Document& doc) {
  const Config& config = doc.config;
  checkPair(w, config.server.tls_cert, config.server.tls_key, "server.", "tls_cert", "tls_key", doc.server_line);
  for (size_t i = 0; i < config.backends.size(); ++i) {
    const auto& tls = config.backends[i].tls;
    if (!tls) continue;
    checkPair(w, tls->cert, tls->key, fmt::format("backends[{}].tls.", i), "cert", "key", doc.backend_lines[i]);
  }
  if (!config.server.tls_ca.empty() && !config.server.tlsEnabled()) {
    w.report("server.tls_ca", doc.server_line,
             "needs server.tls_cert and server.tls_key: client certificates are asked for in the TLS handshake");
  }
  checkAccountsTls(w, config.users, "users", doc.user_lines, config.server);
  checkAccountsTls(w, config.admin_users, "admin_users", doc.admin_user_lines, config.server);
}

}  // namespace sp::conf::detail
