// The parameters of GET /changes (docs/changes.md): tables=msg,tg_channel_message
// and from=<position>, percent-decoded; anything else, twice, or malformed
// is refused with the reason (HTTP 400). Pure.
#pragma once
#include <expected>
#include <string>
#include <string_view>

#include "proxy/changes/change_stream.hpp"

namespace sp::proxy::changes {

inline constexpr size_t kMaxStreamTables = 64;

std::expected<StreamRequest, std::string> parseChangesQuery(std::string_view query);
// "a,b" -> {"a","b"}: names of [A-Za-z0-9_$], at most kMaxStreamTables.
std::expected<std::vector<std::string>, std::string> parseTableList(std::string_view text);

}  // namespace sp::proxy::changes
