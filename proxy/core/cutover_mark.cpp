#include "proxy/core/cutover_mark.hpp"

#include <fmt/format.h>

namespace sp::proxy {

namespace {
constexpr std::string_view kDrop = "DROP TABLE IF EXISTS `";
constexpr std::string_view kSourceName = "src";

bool gtidChar(char c) { return (c >= '0' && c <= '9') || c == '-'; }
bool nameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.';
}
}  // namespace

std::string cutoverSourceMarkSql() { return fmt::format("{}{}{}`", kDrop, kCutoverMarkPrefix, kSourceName); }

std::string cutoverTargetMarkSql(std::string_view source_backend, std::string_view source_gtid) {
  // __sp_cut_<gtid>_<backend>: the GTID has no '_', so the first '_' after it ends it.
  return fmt::format("{}{}{}_{}`", kDrop, kCutoverMarkPrefix, source_gtid, source_backend);
}

std::optional<CutoverMark> parseCutoverMark(std::string_view query) {
  if (!query.starts_with(kDrop)) return std::nullopt;
  query.remove_prefix(kDrop.size());
  if (!query.starts_with(kCutoverMarkPrefix)) return std::nullopt;
  query.remove_prefix(kCutoverMarkPrefix.size());
  const size_t end = query.find('`');
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view name = query.substr(0, end);
  const size_t sep = name.find('_');
  if (sep == 0 || sep == std::string_view::npos || sep + 1 == name.size()) return std::nullopt;
  CutoverMark mark{std::string(name.substr(sep + 1)), std::string(name.substr(0, sep))};
  for (char c : mark.source_gtid) {
    if (!gtidChar(c)) return std::nullopt;
  }
  for (char c : mark.source_backend) {
    if (!nameChar(c)) return std::nullopt;
  }
  return mark;
}

}  // namespace sp::proxy
