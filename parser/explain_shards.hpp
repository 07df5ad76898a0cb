// Recognises the proxy's own `EXPLAIN SHARDS <statement>` (case-insensitive,
// comments allowed around the two words) and returns the inner statement's text.
#pragma once
#include <optional>
#include <string_view>

namespace sp::parser {

std::optional<std::string_view> explainShardsTarget(std::string_view sql);

}  // namespace sp::parser
