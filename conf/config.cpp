#include "conf/config.hpp"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "conf/sections.hpp"

namespace sp::conf {
namespace {

using detail::Document;
using detail::Walker;

// Names must be unique within one list; the second occurrence is the one reported.
void checkUniqueNames(Walker& w, const std::string& list_name, const std::vector<std::string>& names,
                      const std::vector<int>& lines, std::string_view what) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) continue;
    for (size_t j = 0; j < i; ++j) {
      if (names[j] != names[i]) continue;
      std::string message = fmt::format("duplicate {} name '{}'", what, names[i]);
      if (lines[j] > 0) message += fmt::format(" (first defined on line {})", lines[j]);
      w.report(fmt::format("{}[{}].name", list_name, i), lines[i], std::move(message));
      break;
    }
  }
}

template <class T>
std::vector<std::string> namesOf(const std::vector<T>& items) {
  std::vector<std::string> names;
  for (const auto& item : items) names.push_back(item.name);
  return names;
}

void checkDefaultBackend(Walker& w, Document& doc) {
  Config& config = doc.config;
  if (!doc.has_default_backend) {
    if (config.backends.size() == 1) {
      config.default_backend = config.backends.front().name;
    } else if (config.backends.size() > 1) {
      w.report("default_backend", doc.backends_line,
               "missing required key 'default_backend' (needed when there is more than one backend)");
    }
    return;
  }
  if (config.default_backend.empty() || config.findBackend(config.default_backend)) return;
  // A backend whose name was itself invalid may be the one meant: that is already reported.
  if (config.findBackend("")) return;
  std::vector<std::string> names = namesOf(config.backends);
  std::vector<std::string_view> candidates(names.begin(), names.end());
  std::string message =
      candidates.empty()
          ? fmt::format("'{}' is not a backend (no backends are defined)", config.default_backend)
          : fmt::format("'{}' is not among the backends", config.default_backend);
  if (auto close = detail::closestMatch(config.default_backend, candidates)) {
    message += fmt::format(" (did you mean '{}'?)", *close);
  }
  w.report("default_backend", doc.default_backend_line, std::move(message));
}

// Checks that need more than one key at a time.
void crossCheck(Walker& w, Document& doc) {
  const Config& config = doc.config;
  checkUniqueNames(w, "users", namesOf(config.users), doc.user_lines, "user");
  checkUniqueNames(w, "admin_users", namesOf(config.admin_users), doc.admin_user_lines, "admin user");
  checkUniqueNames(w, "backends", namesOf(config.backends), doc.backend_lines, "backend");
  for (size_t i = 0; i < config.backends.size(); ++i) {
    const BackendConfig& b = config.backends[i];
    if (b.min_connections > b.max_connections) {
      w.report(fmt::format("backends[{}].min_connections", i), doc.min_conn_lines[i],
               fmt::format("min_connections {} exceeds max_connections {}", b.min_connections,
                           b.max_connections));
    }
  }
  const auto& admin = config.server.admin_listen;
  if (admin && admin->host == config.server.listen.host && admin->port == config.server.listen.port) {
    w.report("server.admin_listen", doc.admin_listen_line, "must differ from server.listen");
  }
  if (const auto& metrics = config.server.metrics_listen) {
    auto same = [&](const HostPort& other) { return metrics->host == other.host && metrics->port == other.port; };
    if (same(config.server.listen) || (admin && same(*admin))) {
      w.report("server.metrics_listen", doc.metrics_listen_line, "must differ from server.listen and server.admin_listen");
    }
  }
  checkDefaultBackend(w, doc);
  detail::checkTls(w, doc);
  detail::checkFleet(w, doc);
  detail::checkServers(w, doc);
}

std::string absoluteDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p = dir.empty() ? std::filesystem::current_path(ec) : std::filesystem::path(dir);
  if (p.is_relative()) p = std::filesystem::absolute(p, ec);
  return p.lexically_normal().string();
}

}  // namespace

const BackendConfig* Config::findBackend(std::string_view name) const {
  auto it = std::find_if(backends.begin(), backends.end(),
                         [&](const BackendConfig& b) { return b.name == name; });
  return it == backends.end() ? nullptr : &*it;
}

const UserAccount* Config::findUser(std::string_view name) const {
  auto it = std::find_if(users.begin(), users.end(),
                         [&](const UserAccount& u) { return u.name == name; });
  return it == users.end() ? nullptr : &*it;
}

uint32_t Config::pinnedConnectionLimit(std::string_view user) const {
  const UserAccount* account = findUser(user);
  if (account && account->max_pinned_connections) return *account->max_pinned_connections;
  return limits.max_pinned_connections_per_user;
}

std::expected<Config, ConfigIssues> parseConfig(std::string_view yaml_text, const std::string& base_dir) {
  ConfigIssues issues;
  Walker walker(issues);
  YAML::Node root;
  try {
    // yaml-cpp reports malformed documents only by exception; this is the one place
    // it is caught and turned into an issue with the line it points at.
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    walker.report("", line, fmt::format("malformed YAML: {}", e.msg));
    return std::unexpected(std::move(issues));
  }
  Document doc;
  doc.base_dir = absoluteDir(base_dir);
  detail::readDocument(walker, root, doc);
  detail::resolveTlsPaths(doc.config, doc.base_dir);
  crossCheck(walker, doc);
  if (!issues.empty()) {
    // File order reads best; issues without a line (rare) go last.
    std::stable_sort(issues.begin(), issues.end(), [](const ConfigIssue& a, const ConfigIssue& b) {
      return (a.line == 0 ? INT_MAX : a.line) < (b.line == 0 ? INT_MAX : b.line);
    });
    return std::unexpected(std::move(issues));
  }
  return std::move(doc.config);
}

std::expected<Config, ConfigIssues> loadConfig(const std::string& file_path) {
  std::ifstream in(file_path, std::ios::binary);
  if (!in) {
    return std::unexpected(ConfigIssues{{"", 0, fmt::format("cannot open '{}'", file_path)}});
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return std::unexpected(ConfigIssues{{"", 0, fmt::format("cannot read '{}'", file_path)}});
  }
  std::filesystem::path path(file_path);
  auto result = parseConfig(text.str(), absoluteDir(path.parent_path().string()));
  if (result) {
    std::error_code ec;
    result->source_path = std::filesystem::absolute(path, ec).lexically_normal().string();
  }
  return result;
}

std::string formatIssues(const ConfigIssues& issues, std::string_view file_name) {
  std::string out;
  for (const ConfigIssue& issue : issues) {
    out += file_name;
    if (issue.line > 0) out += fmt::format(":{}", issue.line);
    out += ": ";
    if (!issue.path.empty()) out += fmt::format("{}: ", issue.path);
    out += issue.message;
    out += '\n';
  }
  return out;
}

}  // namespace sp::conf
