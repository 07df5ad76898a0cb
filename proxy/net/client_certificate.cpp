#include "proxy/net/client_certificate.hpp"

#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>

namespace sp::proxy {
namespace {

using CertificatePtr = std::unique_ptr<X509, decltype(&X509_free)>;

CertificatePtr peerCertificate(SSL* ssl) { return CertificatePtr(SSL_get1_peer_certificate(ssl), X509_free); }

// X509_NAME_oneline: the form MariaDB compares REQUIRE SUBJECT / ISSUER with.
std::string oneLine(const X509_NAME* name) {
  char* text = X509_NAME_oneline(name, nullptr, 0);
  if (!text) return {};
  std::string out(text);
  OPENSSL_free(text);
  return out;
}

// The key to name when no certificate is there to compare.
const char* requirementKey(const conf::UserAccount& account) {
  if (account.require_x509) return "require_x509";
  return account.require_subject.empty() ? "require_issuer" : "require_subject";
}

}  // namespace

std::string certificateShortfall(const conf::UserAccount& account, const PacketStream& client) {
  if (!account.requiresCertificate()) return {};
  SSL* ssl = client.tlsSession();
  const char* key = requirementKey(account);
  if (!ssl) return fmt::format("{}: the connection is not encrypted", key);
  // A failed chain fails the handshake before this; checked again as MariaDB does.
  if (const long verify = SSL_get_verify_result(ssl); verify != X509_V_OK) {
    return fmt::format("{}: the client certificate did not verify ({})", key, X509_verify_cert_error_string(verify));
  }
  CertificatePtr cert = peerCertificate(ssl);
  if (!cert) return fmt::format("{}: the client sent no certificate", key);
  // Issuer before subject, as MariaDB checks them.
  if (!account.require_issuer.empty()) {
    std::string issuer = oneLine(X509_get_issuer_name(cert.get()));
    if (issuer != account.require_issuer) {
      return fmt::format("require_issuer: the certificate's issuer is '{}', not '{}'", issuer, account.require_issuer);
    }
  }
  if (!account.require_subject.empty()) {
    std::string subject = oneLine(X509_get_subject_name(cert.get()));
    if (subject != account.require_subject) {
      return fmt::format("require_subject: the certificate's subject is '{}', not '{}'", subject,
                         account.require_subject);
    }
  }
  return {};
}

std::string clientCertificateSubject(const PacketStream& client) {
  SSL* ssl = client.tlsSession();
  if (!ssl) return {};
  CertificatePtr cert = peerCertificate(ssl);
  return cert ? oneLine(X509_get_subject_name(cert.get())) : std::string();
}

}  // namespace sp::proxy
