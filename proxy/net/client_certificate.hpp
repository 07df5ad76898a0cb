// The client-certificate requirements of an account (users[].require_x509,
// require_subject, require_issuer) judged against a client's TLS session, as
// MariaDB judges REQUIRE X509 / SUBJECT / ISSUER after the password: TLS, a
// peer certificate whose chain verified against server.tls_ca, and subject
// and issuer equal, whole, to the X509_NAME one-line form ("/C=FI/CN=app").
// A certificate that fails verification never gets this far: the TLS
// handshake fails (tls_contexts.cpp asks for certificates with SSL_VERIFY_PEER).
#pragma once
#include <string>

#include "conf/user_account.hpp"
#include "proxy/net/packet_stream.hpp"

namespace sp::proxy {

// Empty when the account has no requirement or the connection meets it; else
// why not, naming the key ("require_subject: the certificate's subject is ..."),
// for the log (the client gets 1045 either way).
std::string certificateShortfall(const conf::UserAccount& account, const PacketStream& client);

// The subject of the client's certificate in the one-line form; empty when none.
std::string clientCertificateSubject(const PacketStream& client);

}  // namespace sp::proxy
