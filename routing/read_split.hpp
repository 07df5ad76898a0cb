// Which statements a replica may answer (docs/availability.md, "Reads on
// replicas"). Pure: the session decides with these and the replica health it
// holds; the planner's route is the same either way (a replica holds the same
// physical tables as its primary).
#pragma once
#include <span>
#include <string_view>

#include "parser/classify.hpp"
#include "parser/lexer.hpp"

namespace sp::routing {

// A statement's own choice, from a comment before its first word:
// `/* shardproxy_reads=replica */ SELECT ...` or `=primary`.
enum class ReadHint : uint8_t { kNone, kPrimary, kReplica };
ReadHint readHint(std::string_view sql);

// True for a plain read that needs nothing but the rows: a single SELECT that
// locks nothing, writes nothing (no INTO, no sequence step), and reads no
// state of the session's own connection or of one server (user variables,
// @@variables, LAST_INSERT_ID(), FOUND_ROWS(), named locks, diagnostics).
// `tokens`: the statement's significant tokens, then kEnd.
bool replicaReadable(const parser::StatementInfo& info, std::string_view sql, std::span<const parser::Token> tokens);

// The session variable that switches a session's reads (SET @@session.shardproxy_reads = 'replica').
inline constexpr std::string_view kReadsVariable = "shardproxy_reads";

}  // namespace sp::routing
