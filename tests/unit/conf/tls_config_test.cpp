// The TLS keys (issue 14, part 5): server.tls_cert / tls_key / tls_ca, users[].require_tls,
// require_x509 / require_subject / require_issuer, backends[].tls; paths resolve against the config's directory.
#include <gtest/gtest.h>

#include "conf/config.hpp"
#include "tests/unit/conf/minimal_config.hpp"

namespace sp::conf {
namespace {

using fixture::kBase;

std::string config(std::string_view server, std::string_view user_extra = "", std::string_view backend_extra = "") {
  return "server:\n  listen: 127.0.0.1:6033\n" + std::string(server) + "users:\n  - {name: app, password: pw" +
         std::string(user_extra) + "}\nadmin_users:\n  - {name: admin, password: a}\n" +
         "backends:\n  - {name: db0, address: 127.0.0.1:3307, user: proxy" + std::string(backend_extra) + "}\n";
}

ConfigIssue oneTlsIssue(const std::string& yaml) {
  auto parsed = parseConfig(yaml, kBase);
  EXPECT_FALSE(parsed.has_value()) << "expected the config to be rejected";
  if (parsed) return {};
  EXPECT_EQ(parsed.error().size(), 1u) << formatIssues(parsed.error(), "t.yaml");
  return parsed.error().front();
}

TEST(TlsConfig, OffByDefault) {
  auto parsed = parseConfig(config(""), kBase);
  ASSERT_TRUE(parsed) << formatIssues(parsed.error(), "t.yaml");
  EXPECT_FALSE(parsed->server.tlsEnabled());
  EXPECT_FALSE(parsed->users[0].require_tls);
  EXPECT_FALSE(parsed->backends[0].tls.has_value());
}

TEST(TlsConfig, ServerPairAndRequireTls) {
  auto parsed = parseConfig(config("  tls_cert: tls/proxy.pem\n  tls_key: /keys/proxy-key.pem\n", ", require_tls: true"),
                            kBase);
  ASSERT_TRUE(parsed) << formatIssues(parsed.error(), "t.yaml");
  EXPECT_TRUE(parsed->server.tlsEnabled());
  EXPECT_EQ(parsed->server.tls_cert, "/etc/shardproxy/tls/proxy.pem");
  EXPECT_EQ(parsed->server.tls_key, "/keys/proxy-key.pem");
  EXPECT_TRUE(parsed->users[0].require_tls);
}

TEST(TlsConfig, CertWithoutKeyAndTheReverse) {
  ConfigIssue no_key = oneTlsIssue(config("  tls_cert: proxy.pem\n"));
  EXPECT_EQ(no_key.path, "server.tls_key");
  EXPECT_EQ(no_key.message, "'tls_cert' needs 'tls_key' too");
  ConfigIssue no_cert = oneTlsIssue(config("  tls_key: proxy-key.pem\n"));
  EXPECT_EQ(no_cert.path, "server.tls_cert");
  EXPECT_EQ(no_cert.message, "'tls_key' needs 'tls_cert' too");
}

TEST(TlsConfig, RequireTlsWithoutServerTlsIsRefused) {
  ConfigIssue issue = oneTlsIssue(config("", ", require_tls: true"));
  EXPECT_EQ(issue.path, "users[0].require_tls");
  EXPECT_NE(issue.message.find("needs server.tls_cert"), std::string::npos) << issue.message;
  ConfigIssue not_bool = oneTlsIssue(config("", ", require_tls: yes"));
  EXPECT_EQ(not_bool.path, "users[0].require_tls");
}

TEST(TlsConfig, BackendTls) {
  auto parsed = parseConfig(config("", "", ", tls: {ca: tls/ca.pem}"), kBase);
  ASSERT_TRUE(parsed) << formatIssues(parsed.error(), "t.yaml");
  ASSERT_TRUE(parsed->backends[0].tls.has_value());
  const BackendTls& tls = *parsed->backends[0].tls;
  EXPECT_EQ(tls.ca, "/etc/shardproxy/tls/ca.pem");
  EXPECT_TRUE(tls.verify);  // verification is the default
  EXPECT_EQ(tls.server_name, "");
  EXPECT_EQ(tls.cert, "");

  auto full = parseConfig(
      config("", "", ", tls: {verify: false, server_name: db0.example, cert: c.pem, key: /k.pem}"), kBase);
  ASSERT_TRUE(full) << formatIssues(full.error(), "t.yaml");
  EXPECT_FALSE(full->backends[0].tls->verify);
  EXPECT_EQ(full->backends[0].tls->server_name, "db0.example");
  EXPECT_EQ(full->backends[0].tls->cert, "/etc/shardproxy/c.pem");
  EXPECT_EQ(full->backends[0].tls->key, "/k.pem");

  auto null_tls = parseConfig(config("", "", ", tls: ~"), kBase);
  ASSERT_TRUE(null_tls) << formatIssues(null_tls.error(), "t.yaml");
  EXPECT_FALSE(null_tls->backends[0].tls.has_value());
}

TEST(TlsConfig, BackendTlsMistakes) {
  ConfigIssue unknown = oneTlsIssue(config("", "", ", tls: {cafile: ca.pem}"));
  EXPECT_EQ(unknown.path, "backends[0].tls.cafile");
  ConfigIssue half = oneTlsIssue(config("", "", ", tls: {cert: c.pem}"));
  EXPECT_EQ(half.path, "backends[0].tls.key");
  EXPECT_EQ(half.message, "'cert' needs 'key' too");
  ConfigIssue scalar = oneTlsIssue(config("", "", ", tls: true"));
  EXPECT_EQ(scalar.path, "backends[0].tls");
}

constexpr const char* kServerTls = "  tls_cert: proxy.pem\n  tls_key: proxy-key.pem\n";

TEST(TlsConfig, ClientCertificateKeys) {
  auto parsed = parseConfig(config(std::string(kServerTls) + "  tls_ca: tls/clients-ca.pem\n",
                                   ", require_x509: true, require_subject: \"/CN=app\", require_issuer: \"/CN=CA\""),
                            kBase);
  ASSERT_TRUE(parsed) << formatIssues(parsed.error(), "t.yaml");
  EXPECT_EQ(parsed->server.tls_ca, "/etc/shardproxy/tls/clients-ca.pem");
  EXPECT_TRUE(parsed->users[0].require_x509);
  EXPECT_EQ(parsed->users[0].require_subject, "/CN=app");
  EXPECT_EQ(parsed->users[0].require_issuer, "/CN=CA");
  EXPECT_TRUE(parsed->users[0].requiresCertificate());

  auto plain = parseConfig(config(kServerTls), kBase);
  ASSERT_TRUE(plain) << formatIssues(plain.error(), "t.yaml");
  EXPECT_EQ(plain->server.tls_ca, "");
  EXPECT_FALSE(plain->users[0].requiresCertificate());
}

// Each requirement without server.tls_ca: no client would be asked for a
// certificate, so the account could never log in.
TEST(TlsConfig, CertificateRequirementWithoutTlsCaIsRefused) {
  for (std::string key : {"require_x509: true", "require_subject: \"/CN=app\"", "require_issuer: \"/CN=CA\""}) {
    ConfigIssue issue = oneTlsIssue(config(kServerTls, ", " + key));
    EXPECT_EQ(issue.path, "users[0]." + key.substr(0, key.find(':')));
    EXPECT_EQ(issue.line, 6) << key;  // the user's line
    EXPECT_NE(issue.message.find("needs server.tls_ca"), std::string::npos) << issue.message;
  }
  ConfigIssue admin = oneTlsIssue("server:\n  listen: 127.0.0.1:6033\n" + std::string(kServerTls) +
                               "users:\n  - {name: app, password: pw}\nadmin_users:\n"
                               "  - {name: admin, password: a, require_x509: true}\n"
                               "backends:\n  - {name: db0, address: 127.0.0.1:3307, user: proxy}\n");
  EXPECT_EQ(admin.path, "admin_users[0].require_x509");
}

TEST(TlsConfig, TlsCaWithoutServerCertificateAndBadValues) {
  ConfigIssue no_cert = oneTlsIssue(config("  tls_ca: ca.pem\n"));
  EXPECT_EQ(no_cert.path, "server.tls_ca");
  EXPECT_NE(no_cert.message.find("needs server.tls_cert"), std::string::npos) << no_cert.message;
  ConfigIssue not_bool = oneTlsIssue(config(std::string(kServerTls) + "  tls_ca: ca.pem\n", ", require_x509: yes"));
  EXPECT_EQ(not_bool.path, "users[0].require_x509");
  ConfigIssue empty_subject =
      oneTlsIssue(config(std::string(kServerTls) + "  tls_ca: ca.pem\n", ", require_subject: \"\""));
  EXPECT_EQ(empty_subject.path, "users[0].require_subject");
}

}  // namespace
}  // namespace sp::conf
