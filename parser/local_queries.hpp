// Statements whose answer belongs to the proxy, not to a backend: the
// session's own identity, which a pooled backend connection does not share.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace sp::parser {

// For exactly `SELECT CONNECTION_ID() [[AS] alias] [;]` (any case, comments
// and spacing): the result column's name (the alias, or the call as
// written). The client must see the id of its proxy session, the one its
// handshake reported and KILL takes, not that of whichever backend
// connection runs the statement.
std::optional<std::string> connectionIdQuery(std::string_view sql);

}  // namespace sp::parser
