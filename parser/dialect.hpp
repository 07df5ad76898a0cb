// How the server will read a statement: the session's sql_mode flags that
// change lexing/parsing, the client character set, and the server version
// that decides which versioned comments (/*!NNNNN ... */) are executed.
//
// A default Dialect is MariaDB 10.11's default sql_mode with utf8mb4, which
// is what the lexer assumed before Dialect existed. The session builds one
// from what the server reports (see docs/parser.md, "Dialect"):
//
//   Dialect d = fromSqlMode(tracked_sql_mode);           // @@sql_mode text
//   d.charset = charsetByName(character_set_client).charset;   // after checking .status
//   d.server_version = serverVersionFromString(handshake_version);
//   if (!d.supported()) refuse;                           // sql_mode ORACLE
#pragma once
#include <cstdint>
#include <string_view>

namespace sp::parser {

// Client character sets as far as lexing is concerned. Multi-byte sets whose
// trailing bytes can be ASCII (0x40..0x7E: `\`, `` ` ``, `[`, `|`...) need the
// per-charset rules of MariaDB's my_ismbchar(); utf8mb3/utf8mb4 never use an
// ASCII byte inside a character and keep the fast path.
enum class Charset : uint8_t {
  kUtf8mb4,   // default
  kUtf8mb3,   // "utf8"
  kLatin1,    // 0xA0 is whitespace (MariaDB's latin1 ctype)
  kAscii,
  kBinary,
  kBig5,      // lead A1-F9, trail 40-7E A1-FE
  kGbk,       // lead 81-FE, trail 40-7E 80-FE
  kGb2312,    // lead A1-F7, trail A1-FE
  kSjis,      // lead 81-9F E0-FC, trail 40-7E 80-FC
  kCp932,     // as sjis
  kEuckr,     // lead 81-FE, trail 41-5A 61-7A 81-FE
  kUjis,      // 8E + A1-DF; 8F + A1-FE A1-FE; A1-FE A1-FE
  kEucjpms,   // as ujis
};

enum class CharsetStatus : uint8_t {
  kOk,
  // ucs2, utf16, utf16le, utf32: MariaDB refuses them as client charsets
  // ("Variable 'character_set_client' can't be set to the value of 'ucs2'").
  kNotClientCharset,
  // Not lexed by this parser (MariaDB's other 8-bit sets, whose ctype tables
  // differ: swe7 has letters at `|` and `\`), or not a charset MariaDB 10.11
  // knows (gb18030, which is MySQL's). The caller refuses statements on
  // sharded tables rather than guess.
  kUnsupported,
  kUnknown,  // not a name/id MariaDB 10.11 has at all
};

struct CharsetLookup {
  Charset charset = Charset::kUtf8mb4;  // meaningful only when status == kOk
  CharsetStatus status = CharsetStatus::kOk;
  std::string_view name;                // MariaDB's charset name ("gbk"), empty if unknown
};

// Case-insensitive charset name as in SET NAMES / character_set_client
// ("utf8" is utf8mb3). A collation name ("gbk_chinese_ci") is accepted too.
CharsetLookup charsetByName(std::string_view name);
// Collation id as sent in the handshake (1 byte) or shown by
// information_schema.COLLATION_CHARACTER_SET_APPLICABILITY.ID (up to 3271):
// the exact MariaDB 10.11 table (parser/collations.cpp).
CharsetLookup charsetByCollationId(uint32_t id);
std::string_view charsetName(Charset charset);

// "10.11.19-MariaDB-0+deb12u1" -> 101119; also "5.5.5-10.11.19-MariaDB" (the
// replication-compatibility prefix MariaDB servers before 11.0 send in the
// handshake). 0 when no version can be read.
uint32_t serverVersionFromString(std::string_view version);

// MYSQL_VERSION_ID of the server the project is tested against.
inline constexpr uint32_t kDefaultServerVersion = 101119;

struct Dialect {
  bool ansi_quotes = false;           // "x" is an identifier
  bool no_backslash_escapes = false;  // '\' is an ordinary character in strings
  bool pipes_as_concat = false;       // || is concatenation (TokenKind::kConcat)
  bool ignore_space = false;          // spaces allowed between a function name and '('
  bool high_not_precedence = false;   // NOT binds like '!'
  bool mssql_brackets = false;        // sql_mode MSSQL: [x] is an identifier
  bool oracle = false;                // sql_mode ORACLE: another grammar; not supported
  Charset charset = Charset::kUtf8mb4;
  // The client character set is one this lexer does not model (CharsetLookup
  // status other than kOk): `charset` is then meaningless.
  bool unknown_charset = false;
  uint32_t server_version = kDefaultServerVersion;  // for /*!NNNNN ... */

  // False when the statement text cannot be read as the server would
  // (sql_mode ORACLE, an unmodelled client charset): refuse instead of routing.
  bool supported() const { return !oracle && !unknown_charset; }
  bool operator==(const Dialect&) const = default;
};

// The lexing/parsing flags of an sql_mode value as MariaDB reports it
// (comma-separated, any case, spaces tolerated). Combination modes are
// expanded as MariaDB 10.11 does (verified with SET sql_mode=...; SELECT
// @@sql_mode): ANSI, ORACLE, MSSQL, DB2, POSTGRESQL, MAXDB imply
// PIPES_AS_CONCAT, ANSI_QUOTES, IGNORE_SPACE; MYSQL323, MYSQL40 imply
// HIGH_NOT_PRECEDENCE. Other modes do not change lexing and are ignored.
// charset and server_version keep their defaults.
Dialect fromSqlMode(std::string_view sql_mode);

// Byte length of the character starting at p (p < end) in a multi-byte
// charset, as MariaDB's charlen(): >= 2 for a whole multi-byte character,
// 1 for a single-byte character, 0 for a lead byte without a valid
// continuation (the server reads such bytes one at a time in strings and
// rejects them outside strings).
size_t mbCharLength(Charset charset, const unsigned char* p, const unsigned char* end);
// True for charsets where a multi-byte character may contain ASCII bytes.
bool needsMultiByteLexing(Charset charset);

}  // namespace sp::parser
