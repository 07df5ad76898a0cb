#include "coord/xa_records.hpp"

#include "coord/json_fields.hpp"

namespace sp::coord {

namespace json = boost::json;

namespace {

constexpr std::string_view kWhat = "XA decision";

std::string_view outcomeName(XaOutcome outcome) { return outcome == XaOutcome::kCommit ? "commit" : "rollback"; }

}  // namespace

std::string xaDecisionsPrefix(std::string_view prefix) {
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  return std::string(prefix) + "/xa/decisions/";
}

std::string xaDecisionKey(std::string_view prefix, std::string_view gtrid) {
  return xaDecisionsPrefix(prefix) + std::string(gtrid);
}

std::string xaDecisionGtrid(std::string_view prefix, std::string_view key) {
  const std::string start = xaDecisionsPrefix(prefix);
  if (!key.starts_with(start) || key.size() == start.size()) return {};
  return std::string(key.substr(start.size()));
}

std::string encodeXaDecision(const XaDecisionRecord& record) {
  json::object o;
  o["outcome"] = outcomeName(record.outcome);
  o["proxy"] = record.proxy;
  json::array branches;
  for (const auto& b : record.branches) branches.emplace_back(b);
  o["branches"] = std::move(branches);
  o["decided_unix_ms"] = record.decided_unix_ms;
  return json::serialize(o);
}

std::expected<XaDecisionRecord, std::string> decodeXaDecision(std::string_view text) {
  auto o = json_fields::parseObject(text, kWhat);
  if (!o) return std::unexpected(o.error());
  XaDecisionRecord r;
  std::string outcome;
  if (!json_fields::read(*o, "outcome", outcome)) return std::unexpected(json_fields::wrongType(kWhat, "outcome"));
  if (!json_fields::read(*o, "proxy", r.proxy)) return std::unexpected(json_fields::wrongType(kWhat, "proxy"));
  if (!json_fields::read(*o, "branches", r.branches)) return std::unexpected(json_fields::wrongType(kWhat, "branches"));
  if (!json_fields::read(*o, "decided_unix_ms", r.decided_unix_ms)) {
    return std::unexpected(json_fields::wrongType(kWhat, "decided_unix_ms"));
  }
  // An unknown or missing outcome is refused: reading it as either would guess.
  if (outcome == "commit") r.outcome = XaOutcome::kCommit;
  else if (outcome == "rollback") r.outcome = XaOutcome::kRollback;
  else return std::unexpected("malformed XA decision record in etcd: 'outcome' is neither commit nor rollback");
  if (r.proxy.empty()) return std::unexpected("malformed XA decision record in etcd: no 'proxy'");
  return r;
}

}  // namespace sp::coord
