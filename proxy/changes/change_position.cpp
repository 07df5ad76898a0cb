#include "proxy/changes/change_position.hpp"

#include <charconv>

#include <fmt/format.h>

namespace sp::proxy::changes {

namespace {

bool nameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.';
}

template <class T>
bool parseNumber(std::string_view text, T& out) {
  if (text.empty() || text.size() > 20) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::expected<BackendGtids, std::string> parseGtids(std::string_view text, char separator) {
  BackendGtids out;
  if (text.empty()) return out;
  size_t start = 0;
  for (;;) {
    size_t end = text.find(separator, start);
    auto g = parseStreamGtid(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (!g) return std::unexpected(g.error());
    if (out.by_domain.contains(g->domain)) return std::unexpected(fmt::format("domain {} twice", g->domain));
    if (out.by_domain.size() == kMaxPositionDomains) {
      return std::unexpected(fmt::format("more than {} domains", kMaxPositionDomains));
    }
    out.advance(*g);
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

}  // namespace

bool BackendGtids::covers(const StreamGtid& g) const {
  auto it = by_domain.find(g.domain);
  return it != by_domain.end() && it->second.seq >= g.seq;
}

std::string formatGtid(const StreamGtid& g) { return fmt::format("{}-{}-{}", g.domain, g.server, g.seq); }

std::string BackendGtids::connectState() const {
  std::string out;
  for (const auto& [domain, g] : by_domain) out += (out.empty() ? "" : ",") + formatGtid(g);
  return out;
}

std::expected<StreamGtid, std::string> parseStreamGtid(std::string_view text) {
  auto bad = [&] { return std::unexpected(fmt::format("'{}' is not a GTID (domain-server-seq)", text.substr(0, 64))); };
  size_t a = text.find('-');
  if (a == std::string_view::npos) return bad();
  size_t b = text.find('-', a + 1);
  if (b == std::string_view::npos) return bad();
  StreamGtid g;
  if (!parseNumber(text.substr(0, a), g.domain) || !parseNumber(text.substr(a + 1, b - a - 1), g.server) ||
      !parseNumber(text.substr(b + 1), g.seq)) {
    return bad();
  }
  return g;
}

std::expected<BackendGtids, std::string> parseGtidList(std::string_view text) { return parseGtids(text, ','); }

std::string encodePosition(const ChangePosition& position) {
  std::string out;
  for (const auto& [name, gtids] : position.backends) {
    if (!out.empty()) out += ',';
    out += name + ':';
    bool first = true;
    for (const auto& [domain, g] : gtids.by_domain) {
      out += (first ? "" : "_") + formatGtid(g);
      first = false;
    }
  }
  return out;
}

std::expected<ChangePosition, std::string> parsePosition(std::string_view text) {
  if (text.size() > kMaxPositionBytes) {
    return std::unexpected(fmt::format("position longer than {} bytes", kMaxPositionBytes));
  }
  ChangePosition out;
  if (text.empty()) return std::unexpected(std::string("empty position"));
  size_t start = 0;
  for (;;) {
    size_t end = text.find(',', start);
    std::string_view entry = text.substr(start, end == std::string_view::npos ? end : end - start);
    size_t colon = entry.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return std::unexpected(fmt::format("entry {} is not backend:gtids", out.backends.size() + 1));
    }
    std::string name(entry.substr(0, colon));
    for (char c : name) {
      if (!nameChar(c)) return std::unexpected(fmt::format("bad character in backend name of entry {}", out.backends.size() + 1));
    }
    if (out.backends.contains(name)) return std::unexpected(fmt::format("backend {} twice", name));
    if (out.backends.size() == kMaxPositionBackends) {
      return std::unexpected(fmt::format("more than {} backends", kMaxPositionBackends));
    }
    auto gtids = parseGtids(entry.substr(colon + 1), '_');
    if (!gtids) return std::unexpected(fmt::format("backend {}: {}", name, gtids.error()));
    out.backends.emplace(std::move(name), std::move(*gtids));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

}  // namespace sp::proxy::changes
