#include "routing/access_cache.hpp"

#include <cstring>

#include "routing/conditions.hpp"

namespace sp::routing {

namespace {

using parser::Keyword;
using parser::Token;
using parser::TokenKind;

bool isLiteral(TokenKind kind) {
  return kind == TokenKind::kInteger || kind == TokenKind::kDecimal || kind == TokenKind::kFloat ||
         kind == TokenKind::kString || kind == TokenKind::kHexString || kind == TokenKind::kBitString;
}

// Statements whose policy is read from their words alone: parser::
// privilegesNeeded() gives them no statement-specific analysis (SET, DDL,
// PREPARE, bodies...), only the LOAD_FILE / INTO OUTFILE scan of identifiers.
bool ledByPlainDml(const Token& first) {
  return first.isKeyword(Keyword::kSELECT) || first.isKeyword(Keyword::kINSERT) ||
         first.isKeyword(Keyword::kUPDATE) || first.isKeyword(Keyword::kDELETE) ||
         first.isKeyword(Keyword::kREPLACE) || first.isKeyword(Keyword::kWITH);
}

// A token that makes checkAccess() read text the key does not hold.
bool readsBeyondKey(const Token& t, const Token* previous, std::string_view sql) {
  if (t.isError() || t.is(TokenKind::kSemicolon)) return true;
  if (t.isKeyword(Keyword::kPREPARE) || t.isKeyword(Keyword::kEXECUTE)) return true;
  if (t.is(TokenKind::kIdentifier) && t.end - t.begin == 9 && equalsIgnoreCase(t.text(sql), "immediate")) return true;
  // physicalIn() reads a string after FROM / IMMEDIATE as SQL (TRIM(.. FROM 'msg_05') included).
  return t.is(TokenKind::kString) && previous && previous->isKeyword(Keyword::kFROM);
}

}  // namespace

void AccessVerdictCache::followMap(const CompiledShardMap* map) {
  const std::string_view checksum = map ? std::string_view(map->checksum()) : std::string_view();
  if (checksum == map_checksum_) return;
  allowed_.clear();
  map_checksum_.assign(checksum);
}

bool AccessVerdictCache::makeKey(std::string_view sql, const AccessRights& rights, bool backslash_escapes,
                                 std::span<const Token> tokens) {
  if (tokens.size() < 2 || !ledByPlainDml(tokens.front())) return false;
  if (!backslash_escapes && sql.find('\\') != std::string_view::npos) return false;
  // Written through a pointer into a buffer sized for the worst case (every
  // token: kind, 2-byte length, text): the key is built for every statement.
  const size_t bound = 1 + 3 * tokens.size() + sql.size();
  if (bound > kMaxStatementBytes) return false;  // and key_ never grows past this
  if (key_.size() < bound) key_.resize(bound);
  char* out = key_.data();
  *out++ = static_cast<char>((rights.allow_ddl ? 1 : 0) | (rights.physical_tables ? 2 : 0) |
                             (backslash_escapes ? 4 : 0));
  const Token* previous = nullptr;
  for (const Token& t : tokens) {
    if (t.is(TokenKind::kEnd)) break;
    if (readsBeyondKey(t, previous, sql)) return false;
    previous = &t;
    *out++ = static_cast<char>(t.kind);
    if (isLiteral(t.kind)) continue;  // a literal's value: no rule reads it in these statements
    const size_t n = t.end - t.begin;
    *out++ = static_cast<char>(n & 0xff);
    *out++ = static_cast<char>((n >> 8) & 0xff);
    std::memcpy(out, sql.data() + t.begin, n);
    out += n;
  }
  key_length_ = static_cast<size_t>(out - key_.data());
  return key_length_ <= kMaxKeyBytes;
}

std::optional<AccessDenial> AccessVerdictCache::check(std::string_view sql, const AccessRights& rights,
                                                      const CompiledShardMap* map, bool backslash_escapes,
                                                      std::span<const Token> tokens) {
  if (rights.privileged) return std::nullopt;
  followMap(map);
  const bool cacheable = makeKey(sql, rights, backslash_escapes, tokens);
  const std::string_view key(key_.data(), cacheable ? key_length_ : 0);
  if (cacheable && allowed_.contains(key)) {
    ++hits_;
    return std::nullopt;
  }
  auto denial = checkAccess(sql, rights, map, backslash_escapes, tokens);
  if (!denial && cacheable) {
    if (allowed_.size() >= kMaxEntries) allowed_.clear();
    allowed_.emplace(key);
  }
  return denial;
}

}  // namespace sp::routing
