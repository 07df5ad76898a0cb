#include "proxy/core/topology.hpp"

#include <algorithm>

#include "conf/config.hpp"

namespace sp::proxy {

const GroupTopology* Topology::find(std::string_view backend) const {
  for (const auto& g : groups) {
    if (g.backend == backend) return &g;
  }
  return nullptr;
}

GroupTopology* Topology::find(std::string_view backend) {
  for (auto& g : groups) {
    if (g.backend == backend) return &g;
  }
  return nullptr;
}

std::string joinServerNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ',';
    out += n;
  }
  return out;
}

Topology topologyFromConfig(const conf::Config& config) {
  Topology t;
  for (const auto& b : config.backends) {
    GroupTopology g;
    g.backend = b.name;
    g.primary = b.name;
    for (const auto& r : b.replicas) g.replicas.push_back(r.name);
    t.groups.push_back(std::move(g));
  }
  return t;
}

Topology restoreTopology(const conf::Config& config, const std::vector<GroupTopology>& saved,
                         std::vector<std::string>& warnings) {
  Topology t = topologyFromConfig(config);
  for (auto& group : t.groups) {
    const conf::BackendConfig& b = *config.findBackend(group.backend);
    auto it = std::find_if(saved.begin(), saved.end(), [&](const GroupTopology& g) { return g.backend == b.name; });
    if (it == saved.end()) continue;
    std::vector<std::string> named{it->primary};
    named.insert(named.end(), it->replicas.begin(), it->replicas.end());
    named.insert(named.end(), it->fenced.begin(), it->fenced.end());
    std::string problem;
    for (size_t i = 0; i < named.size() && problem.empty(); ++i) {
      if (!isServerOf(b, named[i])) problem = "server '" + named[i] + "' is no longer in backends[" + b.name + "]";
      for (size_t j = 0; j < i && problem.empty(); ++j) {
        if (named[j] == named[i]) problem = "server '" + named[i] + "' is listed twice";
      }
    }
    if (!problem.empty()) {
      warnings.push_back("backend " + b.name + ": the saved topology (primary " + it->primary +
                         ") is not used: " + problem + "; the configuration's roles apply");
      continue;
    }
    GroupTopology restored = *it;
    auto add = [&](const std::string& name) {
      if (std::find(named.begin(), named.end(), name) == named.end()) restored.replicas.push_back(name);
    };
    add(b.name);
    for (const auto& r : b.replicas) add(r.name);
    group = std::move(restored);
  }
  return t;
}

bool isServerOf(const conf::BackendConfig& backend, std::string_view server) {
  if (backend.name == server) return true;
  return std::any_of(backend.replicas.begin(), backend.replicas.end(),
                     [&](const conf::ReplicaConfig& r) { return r.name == server; });
}

std::optional<conf::BackendConfig> serverLogin(const conf::BackendConfig& backend, std::string_view server) {
  conf::BackendConfig out = backend;
  out.replicas.clear();
  if (backend.name == server) return out;
  for (const auto& r : backend.replicas) {
    if (r.name != server) continue;
    out.name = r.name;
    out.address = r.address;
    if (!r.user.empty()) {
      out.user = r.user;
      out.password = r.password;
    }
    out.min_connections = 0;  // a replica's pool fills when reads come
    return out;
  }
  return std::nullopt;
}

std::optional<conf::BackendConfig> primaryPoolConfig(const conf::Config& config, const Topology& topology,
                                                     std::string_view backend) {
  const conf::BackendConfig* b = config.findBackend(backend);
  if (b == nullptr) return std::nullopt;
  const GroupTopology* g = topology.find(backend);
  if (g == nullptr || g->primary == b->name) {
    conf::BackendConfig out = *b;
    if (g != nullptr) {
      // Only the servers replicating from it now (a fenced one serves nothing).
      std::erase_if(out.replicas, [&](const conf::ReplicaConfig& r) {
        return std::find(g->replicas.begin(), g->replicas.end(), r.name) == g->replicas.end();
      });
    }
    return out;
  }
  auto login = serverLogin(*b, g->primary);
  if (!login) return std::nullopt;
  login->name = b->name;
  login->min_connections = b->min_connections;
  for (const auto& name : g->replicas) {
    auto r = serverLogin(*b, name);
    if (!r) continue;
    login->replicas.push_back(conf::ReplicaConfig{r->name, r->address, r->user, r->password, r->max_active_statements});
  }
  return login;
}

std::vector<conf::BackendConfig> replicaLogins(const conf::Config& config, const Topology& topology,
                                               std::string_view backend) {
  std::vector<conf::BackendConfig> out;
  const conf::BackendConfig* b = config.findBackend(backend);
  if (b == nullptr) return out;
  const GroupTopology* g = topology.find(backend);
  if (g == nullptr) {
    for (const auto& r : b->replicas) out.push_back(*serverLogin(*b, r.name));
    return out;
  }
  for (const auto& name : g->replicas) {
    if (auto r = serverLogin(*b, name)) out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace sp::proxy
