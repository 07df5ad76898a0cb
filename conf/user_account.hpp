// `users:` and `admin_users:` of the configuration (docs/configuration.md,
// docs/security.md): one account, its limits and statement policy.
// Its own header (conf/config.hpp holds the whole configuration): a file
// that reads only this section includes only this.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "conf/ha_config.hpp"

namespace sp::conf {

struct UserAccount {
  std::string name;
  // Exactly one of the two (docs/configuration.md): the clear text, or the
  // mysql_native_password hash "*" + 40 upper-case hex digits, SHA1(SHA1(pw)),
  // as MariaDB's PASSWORD() prints it (`shardproxy --hash-password`).
  std::string password;
  std::string password_hash;
  bool allow_empty_password = false;  // else an empty or missing password is a config error
  std::string default_database;  // may be empty
  bool require_tls = false;      // plaintext logins refused (1045, as MariaDB's REQUIRE SSL)
  // Client certificate (MariaDB's REQUIRE X509 / SUBJECT / ISSUER); each
  // implies TLS and a certificate verified against server.tls_ca. Subject and
  // issuer are compared whole with the X509_NAME one-line form ("/C=../CN=..").
  bool require_x509 = false;
  std::string require_subject;  // empty: any subject
  std::string require_issuer;   // empty: any issuer
  bool requiresCertificate() const { return require_x509 || !require_subject.empty() || !require_issuer.empty(); }
  uint32_t max_connections = 0;  // sessions of this user at once; 0 = no limit (users only)
  // Backend connections this user's pinned sessions may hold at once (users
  // only); nullopt = limits.max_pinned_connections_per_user; 0 = no limit.
  std::optional<uint32_t> max_pinned_connections;
  // Statement policy (docs/security.md); `users` only, not `admin_users`.
  bool privileged = false;       // DBA account: no statement policy, physical tables allowed
  bool allow_ddl = false;        // CREATE / ALTER / DROP / TRUNCATE / RENAME of tables, views, routines, ...
  bool physical_tables = false;  // may name physical shard tables (msg_05) directly
  bool local_infile = false;     // may LOAD DATA LOCAL INFILE (the client sends a file through the proxy)
  // Allow lists (docs/security.md): absent = no restriction. Schemas by
  // name; tables as `table` or `schema.table`; `*` matches any characters.
  std::optional<std::vector<std::string>> allow_schemas;
  std::optional<std::vector<std::string>> allow_tables;
  ReadTarget reads = ReadTarget::kPrimary;  // users only; a session may change it (docs/availability.md)
};

}  // namespace sp::conf
