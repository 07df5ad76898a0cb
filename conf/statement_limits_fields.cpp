// The `statement_limits:` list (docs/configuration.md, "statement_limits").
#include <fmt/format.h>

#include <set>

#include "conf/field_readers.hpp"
#include "conf/sections.hpp"

namespace sp::conf::detail {
namespace {

const FieldSpec<StatementLimitRule> kRuleFields[] = {
    {"user", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, StatementLimitRule& r) {
       if (auto s = w.readString(v, p, NullIs::kMissing, false)) r.user = *s;
     }},
    {"digest", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, StatementLimitRule& r) {
       if (auto s = w.readString(v, p, NullIs::kMissing, false)) r.digest = *s;
     }},
    {"max_per_second", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, StatementLimitRule& r) {
       assign(w.readUInt(v, p, 0, kMaxStatementRate), r.max_per_second);
     }},
    {"max_concurrent", false,
     [](Walker& w, const YAML::Node& v, const std::string& p, StatementLimitRule& r) {
       assign(w.readUInt(v, p, 0, kMaxStatementConcurrency), r.max_concurrent);
     }},
};

}  // namespace

void readStatementLimits(Walker& w, const YAML::Node& list, const std::string& path,
                         std::vector<StatementLimitRule>& out) {
  if (list.IsNull()) return;
  if (!w.expectSequence(list, path)) return;
  if (list.size() > kMaxStatementLimitRules) {
    w.report(path, list, fmt::format("at most {} rules", kMaxStatementLimitRules));
    return;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item = fmt::format("{}[{}]", path, i);
    StatementLimitRule rule;
    readMapping<StatementLimitRule>(w, list[i], item, kRuleFields, rule);
    if (!list[i].IsMap()) continue;
    if (rule.user.empty() == rule.digest.empty()) {
      w.report(item, list[i], "give exactly one of user: and digest:");
      continue;
    }
    if (rule.max_per_second == 0 && rule.max_concurrent == 0) {
      w.report(item, list[i], "give max_per_second:, max_concurrent: or both (above 0)");
      continue;
    }
    const std::string what = rule.user.empty() ? "digest " + rule.digest : "user " + rule.user;
    if (!seen.insert(what).second) {
      w.report(item, list[i], "a second rule for " + what);
      continue;
    }
    out.push_back(std::move(rule));
  }
}

}  // namespace sp::conf::detail
