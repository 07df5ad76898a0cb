// PacketStream over TLS (issue 14 part 5) on a loopback socket pair: the
// upgrade after a plaintext packet when the peer's ClientHello follows at once
// (why setReadExactly exists), packets both ways through TLS (a message of
// 16 MiB and more included), and the certificate checks of the client role.
// The certificate is made here in memory (OpenSSL), self-signed for 127.0.0.1.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <memory>
#include <string>
#include <tuple>

#include "proxy/net/packet_stream.hpp"
#include "stream_pair.hpp"

namespace sp::proxy {
namespace {

namespace ssl = boost::asio::ssl;

struct TestCert {
  std::string cert_pem;
  std::string key_pem;
};

std::string pemOf(int (*write)(BIO*, void*), void* object) {
  BIO* bio = BIO_new(BIO_s_mem());
  write(bio, object);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(n));
  BIO_free(bio);
  return pem;
}

// A self-signed certificate naming IP 127.0.0.1, valid for a day.
TestCert makeCert() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("packet stream test"), -1,
                             -1, 0);
  X509_set_issuer_name(x, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  X509_EXTENSION* san = X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name, "IP:127.0.0.1");
  X509_add_ext(x, san, -1);
  X509_EXTENSION_free(san);
  X509_sign(x, key, EVP_sha256());
  TestCert out;
  out.cert_pem = pemOf([](BIO* b, void* o) { return PEM_write_bio_X509(b, static_cast<X509*>(o)); }, x);
  out.key_pem = pemOf(
      [](BIO* b, void* o) {
        return PEM_write_bio_PrivateKey(b, static_cast<EVP_PKEY*>(o), nullptr, nullptr, 0, nullptr, nullptr);
      },
      key);
  X509_free(x);
  EVP_PKEY_free(key);
  return out;
}

const TestCert& cert() {
  static const TestCert c = makeCert();
  return c;
}

std::shared_ptr<ssl::context> serverContext() {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->use_certificate_chain(asio::buffer(cert().cert_pem));
  ctx->use_private_key(asio::buffer(cert().key_pem), ssl::context::pem);
  return ctx;
}

std::shared_ptr<ssl::context> clientContext(bool trust_the_cert) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  if (trust_the_cert) ctx->add_certificate_authority(asio::buffer(cert().cert_pem));
  ctx->set_verify_mode(ssl::verify_peer);
  return ctx;
}

protocol::Bytes bytesOf(std::string_view text) { return protocol::Bytes(text.begin(), text.end()); }

// The client sends a plaintext packet and starts its TLS handshake right
// behind it, as drivers send their ClientHello behind the SSL request.
TEST(PacketStreamTls, UpgradeRightAfterAPacketThenPacketsBothWays) {
  Pair p;
  std::string server_got, client_got, server_error = "not run", client_error = "not run";
  size_t big_size = 0;
  p.run([&]() -> awaitable<void> {
    p.server->setReadExactly(true);
    auto first = co_await p.server->read();
    p.server->setReadExactly(false);
    if (!first) co_return;
    server_got = std::string(protocol::asText(first->payload));
    auto tls = co_await p.server->startTls(serverContext(), TlsRole::kServer, std::string_view());
    server_error = tls ? "" : tls.error();
    if (!tls) co_return;
    auto second = co_await p.server->read();
    if (second) server_got += "|" + std::string(protocol::asText(second->payload));
    auto big = co_await p.server->read();
    if (big) big_size = big->payload.size();
    p.server->append(bytesOf("pong"), 1);
    co_await p.server->flush();
  });
  p.run([&]() -> awaitable<void> {
    p.client->append(bytesOf("ssl request"), 1);
    co_await p.client->flush();
    const std::string_view host = "127.0.0.1";
    auto tls = co_await p.client->startTls(clientContext(true), TlsRole::kClient, host);
    client_error = tls ? "" : tls.error();
    if (!tls) co_return;
    p.client->append(bytesOf("hello over tls"), 2);
    // 16 MiB + 1: two wire packets, joined by the reader.
    std::string big((16u << 20) + 1, 'x');
    p.client->append(bytesOf(big), 3);
    co_await p.client->flush();
    auto reply = co_await p.client->read();
    if (reply) client_got = std::string(protocol::asText(reply->payload));
  });
  p.io.run();
  EXPECT_EQ(server_error, "");
  EXPECT_EQ(client_error, "");
  EXPECT_EQ(server_got, "ssl request|hello over tls");
  EXPECT_EQ(big_size, (16u << 20) + 1);
  EXPECT_EQ(client_got, "pong");
  EXPECT_TRUE(p.server->isTls());
  EXPECT_NE(p.client->tlsDescription().find("TLS"), std::string::npos) << p.client->tlsDescription();
}

// Without exact reads the ClientHello lands in the stream's plaintext buffer:
// startTls refuses instead of handing OpenSSL a handshake with a hole in it.
TEST(PacketStreamTls, BufferedBytesAfterTheRequestAreRefused) {
  Pair p;
  std::string server_error;
  p.run([&]() -> awaitable<void> {
    auto first = co_await p.server->read();
    // Give the follow-up bytes time to arrive if the first recv did not take them.
    for (int i = 0; first && i < 100 && !p.server->tryFill(); ++i) {
      co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
    }
    auto tls = co_await p.server->startTls(serverContext(), TlsRole::kServer, std::string_view());
    server_error = tls ? "" : tls.error();
    p.server->close();
  });
  p.run([&]() -> awaitable<void> {
    p.client->append(bytesOf("ssl request"), 1);
    p.client->appendFramedBytes(bytesOf("\x16\x03\x01"));  // the start of a ClientHello, same send
    co_await p.client->flush();
  });
  p.io.run();
  EXPECT_EQ(server_error, "bytes after the SSL request");
}

// The client role checks the chain against its CA and the name it was given.
TEST(PacketStreamTls, ClientRefusesAnUntrustedOrMisnamedCertificate) {
  for (auto [trust, host, want] :
       {std::tuple{false, "127.0.0.1", "certificate verification failed: self-signed certificate"},
        std::tuple{true, "db.example", "certificate verification failed: hostname mismatch"},
        std::tuple{true, "127.0.0.2", "certificate verification failed: IP address mismatch"}}) {
    Pair p;
    std::string client_error;
    p.run([&]() -> awaitable<void> {
      co_await p.server->startTls(serverContext(), TlsRole::kServer, std::string_view());
    });
    p.run([&, trust = trust, host = host]() -> awaitable<void> {
      const std::string_view name = host;
      auto tls = co_await p.client->startTls(clientContext(trust), TlsRole::kClient, name);
      client_error = tls ? "" : tls.error();
      p.client->close();
    });
    p.io.run();
    EXPECT_EQ(client_error.rfind(want, 0), 0u) << host << ": " << client_error;
  }
}

}  // namespace
}  // namespace sp::proxy
