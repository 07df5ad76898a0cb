// The global transactions the proxy runs for transactions.cross_backend:
// atomic are XA branches named <transactions.xid_prefix>-<boot>-<n> on the
// backends (proxy/core/xa_registry.hpp). A client's own XA statement naming
// one would end another session's branch, or a branch in doubt that only the
// decision log may decide, with the proxy's backend account: refused,
// whatever the user's rights, on every path (text, prepared, each statement
// of a multi-statement packet). XA RECOVER stays allowed: it ends nothing.
//
// The transaction id is read as the server reads it: a quoted string (the
// session's sql_mode decides backslashes) or a hex literal (X'..', 0x..: how
// JDBC XA drivers send ids). An id in another form (an introducer, adjacent
// strings, a bit literal) could spell the prefix in a way this check does not
// decode: refused too. Pure.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "parser/dialect.hpp"

namespace sp::parser {

// nullopt: not an XA statement naming a reserved id; else the refusal's message.
std::optional<std::string> reservedXidRefusal(std::string_view sql, std::string_view prefix,
                                              const Dialect& dialect);

}  // namespace sp::parser
