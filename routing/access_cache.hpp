// The statement policy's "may run" verdicts (access_check.hpp), remembered
// per statement shape so a repeated application statement is not walked
// token by token again (docs/benchmarks.md, issue 15 part 5, third pass).
//
// Only verdicts that provably depend on nothing the key leaves out are kept.
// The key is the statement's significant tokens (kind, and the text of every
// token that is not a literal value), the rights that checkAccess() reads
// (allow_ddl, physical_tables) and the NO_BACKSLASH_ESCAPES mode; the shard
// map is matched by its checksum (equal checksums: the same physical table
// names), and the entries are dropped when it changes. A statement is
// cacheable only when checkAccess() reads no literal's value and no text
// between its tokens:
//   - one statement (no `;`) led by SELECT, INSERT, UPDATE, DELETE, REPLACE
//     or WITH (no SET, PREPARE, EXECUTE IMMEDIATE, stored program body...);
//   - no PREPARE / EXECUTE / IMMEDIATE word anywhere, no string literal
//     right after FROM or IMMEDIATE (its text is checked as SQL);
//   - no lexer error token, and under NO_BACKSLASH_ESCAPES no backslash
//     (the text is lexed again differently there);
//   - the statement's default-dialect tokens are at hand.
// Refusals are never kept (their messages name objects, users, databases):
// they are computed every time, exactly as before.
//
// Not thread-safe: one cache per worker thread, like the plan cache.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

#include "parser/lexer.hpp"
#include "routing/access_check.hpp"

namespace sp::routing {

class AccessVerdictCache {
 public:
  // At most this many shapes are kept (then all are dropped and the cache
  // fills again), each of at most kMaxKeyBytes: about 2 MiB per worker.
  static constexpr size_t kMaxEntries = 2048;
  static constexpr size_t kMaxKeyBytes = 1024;
  // Longer statements (with their literals) are checked every time.
  static constexpr size_t kMaxStatementBytes = 16 * 1024;

  // Same result as checkAccess(sql, rights, map, backslash_escapes, tokens).
  std::optional<AccessDenial> check(std::string_view sql, const AccessRights& rights, const CompiledShardMap* map,
                                    bool backslash_escapes, std::span<const parser::Token> tokens);

  size_t size() const { return allowed_.size(); }
  uint64_t hits() const { return hits_; }

 private:
  // Fills key_ for a cacheable statement; false when it is not one.
  bool makeKey(std::string_view sql, const AccessRights& rights, bool backslash_escapes,
               std::span<const parser::Token> tokens);
  void followMap(const CompiledShardMap* map);

  // Heterogeneous lookup: the key is looked up as a view of key_, no copy.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
  };
  std::unordered_set<std::string, KeyHash, std::equal_to<>> allowed_;  // keys of statements checkAccess() let run
  std::string map_checksum_;                 // of the map the entries were made under ("": none)
  std::string key_;                          // scratch, kept between statements: its first key_length_ bytes
  size_t key_length_ = 0;
  uint64_t hits_ = 0;
};

}  // namespace sp::routing
