#include "proxy/core/gtid.hpp"

#include <charconv>

namespace sp::proxy {
namespace {

template <class T>
bool readNumber(std::string_view& text, T& out, bool last) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, out);
  if (ec != std::errc{} || ptr == begin) return false;
  text.remove_prefix(static_cast<size_t>(ptr - begin));
  if (last) return text.empty();
  if (text.empty() || text.front() != '-') return false;
  text.remove_prefix(1);
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<Gtid> parseGtid(std::string_view text) {
  text = trim(text);
  Gtid g;
  if (!readNumber(text, g.domain, false) || !readNumber(text, g.server, false) || !readNumber(text, g.seq, true)) {
    return std::nullopt;
  }
  return g;
}

bool positionCovers(std::string_view position, const Gtid& gtid) {
  while (!position.empty()) {
    size_t comma = position.find(',');
    auto entry = parseGtid(position.substr(0, comma));
    if (!entry) return false;
    if (entry->domain == gtid.domain) return entry->seq >= gtid.seq;
    if (comma == std::string_view::npos) break;
    position.remove_prefix(comma + 1);
  }
  return false;
}

std::optional<std::vector<Gtid>> parsePosition(std::string_view position) {
  std::vector<Gtid> out;
  position = trim(position);
  while (!position.empty()) {
    size_t comma = position.find(',');
    auto entry = parseGtid(position.substr(0, comma));
    if (!entry) return std::nullopt;
    out.push_back(*entry);
    if (comma == std::string_view::npos) break;
    position.remove_prefix(comma + 1);
  }
  return out;
}

std::optional<uint64_t> positionShortfall(std::string_view position, std::string_view other) {
  auto mine = parsePosition(position);
  auto theirs = parsePosition(other);
  if (!mine || !theirs) return std::nullopt;
  uint64_t missing = 0;
  for (const auto& t : *theirs) {
    uint64_t have = 0;
    for (const auto& m : *mine) {
      if (m.domain == t.domain) have = m.seq;
    }
    if (t.seq > have) missing += t.seq - have;
  }
  return missing;
}

bool positionCoversAll(std::string_view position, std::string_view other) {
  auto shortfall = positionShortfall(position, other);
  return shortfall && *shortfall == 0;
}

}  // namespace sp::proxy
