// users: and admin_users: (docs/configuration.md, "users"): credentials,
// the statement policy, allow lists and per-account limits.
#include <algorithm>
#include <array>
#include <span>

#include <fmt/format.h>

#include "conf/field_readers.hpp"
#include "conf/sections.hpp"

namespace sp::conf::detail {
namespace {

struct UserEntry {
  UserAccount account;
  int name_line = 0;
  bool has_password = false;
  bool has_hash = false;
  bool bad_hash = false;  // reported already
};


// A list of allow-list patterns: names of letters, digits, `_`, `$`, `-`
// and `*`; table patterns may hold one `.` (`schema.table`).
void readPatternList(Walker& w, const YAML::Node& v, const std::string& p, bool qualified,
                     std::optional<std::vector<std::string>>& out) {
  if (!w.expectSequence(v, p)) return;
  std::vector<std::string> patterns;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string item_path = p + "[" + std::to_string(i) + "]";
    auto text = w.readString(v[i], item_path, NullIs::kMissing, false);
    if (!text) continue;
    size_t dots = 0;
    bool ok = true;
    for (char c : *text) {
      if (c == '.') ++dots;
      else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                 c == '$' || c == '-' || c == '*')) {
        ok = false;
      }
    }
    if (!ok || dots > (qualified ? 1u : 0u) || text->front() == '.' || text->back() == '.') {
      w.report(item_path, v[i], qualified ? "expected a table pattern: table or schema.table (letters, digits, _ $ -, * as wildcard)"
                                          : "expected a schema pattern (letters, digits, _ $ -, * as wildcard)");
      continue;
    }
    patterns.push_back(std::move(*text));
  }
  out = std::move(patterns);
}

// "*" + 40 hex digits (either case; kept upper-case, as PASSWORD() prints it).
// The value itself is never repeated in a message.
// False when reported.
bool readPasswordHash(Walker& w, const YAML::Node& v, const std::string& p, std::string& out) {
  auto text = w.readString(v, p, NullIs::kEmpty, true);
  if (!text) return false;
  if (text->empty()) return true;
  bool ok = text->size() == 41 && (*text)[0] == '*';
  for (size_t i = 1; ok && i < text->size(); ++i) {
    char& c = (*text)[i];
    if (c >= 'a' && c <= 'f') c = static_cast<char>(c - 'a' + 'A');
    ok = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F');
  }
  if (!ok) {
    w.report(p, v, "not a mysql_native_password hash: '*' followed by 40 hex digits, as PASSWORD() or "
                   "`shardproxy --hash-password` prints it");
    return false;
  }
  out = std::move(*text);
  return true;
}

// Keys of both lists: who logs in and how.
const FieldSpec<UserEntry> kCredentialFields[] = {
    {"name", true,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       u.name_line = lineOf(v);
       readName(w, v, p, u.account.name);
     }},
    {"password", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       u.has_password = true;
       readStringInto(w, v, p, u.account.password, NullIs::kEmpty, true);
     }},
    {"password_hash", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       u.has_hash = true;
       u.bad_hash = !readPasswordHash(w, v, p, u.account.password_hash);
     }},
    {"allow_empty_password", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       readBool(w, v, p, u.account.allow_empty_password);
     }},
    {"default_database", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       readStringInto(w, v, p, u.account.default_database, NullIs::kEmpty, true);
     }},
    {"max_connections", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       assign(w.readUInt(v, p, 0, kMaxClientConnections), u.account.max_connections);
     }},
    {"require_tls", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       readBool(w, v, p, u.account.require_tls);
     }},
    {"require_x509", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       readBool(w, v, p, u.account.require_x509);
     }},
    {"require_subject", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       readStringInto(w, v, p, u.account.require_subject, NullIs::kEmpty, false);
     }},
    {"require_issuer", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       readStringInto(w, v, p, u.account.require_issuer, NullIs::kEmpty, false);
     }},
};

// Keys of `users` only: the statement policy (docs/security.md).
const FieldSpec<UserEntry> kPolicyFields[] = {
    {"privileged", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       readBool(w, v, p, u.account.privileged);
     }},
    {"allow_ddl", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       readBool(w, v, p, u.account.allow_ddl);
     }},
    {"physical_tables", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       readBool(w, v, p, u.account.physical_tables);
     }},
    {"local_infile", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       readBool(w, v, p, u.account.local_infile);
     }},
    {"allow_schemas", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       readPatternList(w, v, p, false, u.account.allow_schemas);
     }},
    {"allow_tables", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       readPatternList(w, v, p, true, u.account.allow_tables);
     }},
    {"reads", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       static constexpr std::string_view kReads[] = {"primary", "replica"};
       if (auto choice = w.readChoice(v, p, kReads)) {
         u.account.reads = *choice == "replica" ? ReadTarget::kReplica : ReadTarget::kPrimary;
       }
     }},
    {"max_pinned_connections", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, UserEntry& u) {
       if (auto n = w.readUInt(v, p, 0, kMaxPoolConnections)) u.account.max_pinned_connections = static_cast<uint32_t>(*n);
     }},
};

const auto kUserFields = [] {
  std::array<FieldSpec<UserEntry>, std::size(kCredentialFields) + std::size(kPolicyFields)> all{};
  std::copy(std::begin(kPolicyFields), std::end(kPolicyFields),
            std::copy(std::begin(kCredentialFields), std::end(kCredentialFields), all.begin()));
  return all;
}();

// One of password / password_hash; empty only when allowed.
void checkCredentials(Walker& w, const YAML::Node& node, const std::string& path, const UserEntry& u) {
  if (u.bad_hash) return;
  if (u.has_password && u.has_hash) {
    w.report(path + ".password_hash", node, "give either 'password' or 'password_hash', not both");
    return;
  }
  if (!u.has_password && !u.has_hash && !u.account.allow_empty_password) {
    w.report(path + ".password", node,
             "missing required key 'password' (or 'password_hash'; 'allow_empty_password: true' for none)");
    return;
  }
  const bool empty = u.account.password.empty() && u.account.password_hash.empty();
  if (empty && (u.has_password || u.has_hash) && !u.account.allow_empty_password) {
    w.report(path + (u.has_hash ? ".password_hash" : ".password"), node,
             "empty password: anyone knowing the user name could log in; set one, or 'allow_empty_password: true'");
  }
}

void readAccounts(Walker& w, const YAML::Node& list, const std::string& path,
                  std::span<const FieldSpec<UserEntry>> fields, std::vector<UserAccount>& out, std::vector<int>& lines) {
  if (list.IsNull()) return;  // `users:` with nothing under it
  if (!w.expectSequence(list, path)) return;
  for (size_t i = 0; i < list.size(); ++i) {
    UserEntry entry;
    const std::string item = fmt::format("{}[{}]", path, i);
    readMapping<UserEntry>(w, list[i], item, fields, entry);
    if (list[i].IsMap()) checkCredentials(w, list[i], item, entry);
    out.push_back(std::move(entry.account));
    lines.push_back(entry.name_line);
  }
}

}  // namespace

void readUsers(Walker& walker, const YAML::Node& value, const std::string& path, Document& doc) {
  readAccounts(walker, value, path, kUserFields, doc.config.users, doc.user_lines);
}

void readAdminUsers(Walker& walker, const YAML::Node& value, const std::string& path, Document& doc) {
  // Admin accounts take the credential keys only (no statement policy or allow lists).
  readAccounts(walker, value, path, kCredentialFields, doc.config.admin_users, doc.admin_user_lines);
}

}  // namespace sp::conf::detail
