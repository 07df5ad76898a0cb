// Replaces the `?` placeholders of a statement with SQL literals, in order:
// how the proxy runs a prepared statement as text (its scatter-gather merges
// text rows). Placeholders are found by the lexer, so a `?` inside a string,
// a quoted identifier or a comment is left alone.
#pragma once
#include <expected>
#include <span>
#include <string>
#include <string_view>

namespace sp::parser {

// Each literal is written with a space on both sides, so that it can never
// merge with a neighbouring token ("LIMIT?" or "?AND"). Fails when the number
// of placeholders differs from literals.size() or the statement does not lex.
std::expected<std::string, std::string> substitutePlaceholders(std::string_view sql,
                                                               std::span<const std::string> literals);

}  // namespace sp::parser
