#include "proxy/session/session_diagnostics.hpp"

#include <algorithm>
#include <charconv>

#include "parser/local_queries.hpp"
#include "protocol/constants.hpp"

namespace sp::proxy {

namespace {

namespace flag = protocol::column_flag;

protocol::ColumnDefinition41 textColumn(uint32_t length) { return localTextColumn(length); }

protocol::ColumnDefinition41 numberColumn(protocol::ColumnType type, uint32_t length, uint16_t flags) {
  return localNumberColumn(type, length, flags);
}

}  // namespace

bool SessionDiagnostics::onSuccess(uint16_t warnings, bool resets) {
  if (warnings == 0 && !resets) return false;
  conditions_.clear();
  total_ = warnings;
  return warnings > 0;
}

void SessionDiagnostics::onError(const protocol::ErrPacket& err) {
  conditions_.assign(1, Condition{"Error", err.error_code, err.message});
  total_ = 1;
}

void SessionDiagnostics::setConditions(const std::vector<std::vector<std::optional<std::string>>>& rows) {
  conditions_.clear();
  for (const auto& row : rows) {
    if (conditions_.size() == kMaxConditions) break;
    if (row.size() != 3 || !row[0] || !row[1] || !row[2]) continue;
    uint32_t code = 0;
    const std::string& text = *row[1];
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), code);
    if (ec != std::errc{} || end != text.data() + text.size()) continue;
    conditions_.push_back(Condition{*row[0], code, *row[2]});
  }
}

bool SessionDiagnostics::takeInvalidConditionNumber(uint64_t n) {
  if (n >= 1 && n <= conditions_.size()) return false;
  if (conditions_.size() < kMaxConditions) conditions_.push_back({"Error", 1758, "Invalid condition number"});
  ++total_;
  return true;
}

std::optional<LocalResult> SessionDiagnostics::answer(std::string_view sql) const {
  auto query = parser::diagnosticsQuery(sql);
  if (!query) return std::nullopt;
  auto selected = [&](const Condition& c) { return !query->errors_only || c.level == "Error"; };
  LocalResult result;
  if (query->count) {
    const uint64_t n = query->errors_only
                           ? static_cast<uint64_t>(std::count_if(conditions_.begin(), conditions_.end(), selected))
                           : total_;
    result.columns = {query->errors_only ? "@@session.error_count" : "@@session.warning_count"};
    result.definitions = {numberColumn(protocol::ColumnType::kLongLong, 21, 0)};
    result.rows.push_back({std::to_string(n)});
    return result;
  }
  result.columns = {"Level", "Code", "Message"};
  result.definitions = {textColumn(28), numberColumn(protocol::ColumnType::kLong, 4, flag::kNotNull),
                        textColumn(2048)};
  uint64_t skipped = 0;
  for (const auto& c : conditions_) {
    if (!selected(c)) continue;
    if (skipped++ < query->offset) continue;
    if (query->limit && result.rows.size() >= *query->limit) break;
    result.rows.push_back({c.level, std::to_string(c.code), c.message});
  }
  return result;
}

}  // namespace sp::proxy
