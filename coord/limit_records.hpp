// Statement limits set at run time in a fleet (issue 32, docs/operations.md
// "Statement limits"), as kept in etcd under the fleet's prefix:
//   limits/<kind>/<base64 of the name>   one rule (LimitRecord, JSON), no
//                                        lease: SET LIMIT on any proxy puts
//                                        it, every proxy applies it (read at
//                                        each etcd session's start, then
//                                        watched), a proxy started later too
// A removed rule (both limits 0) stays as a record: it must override the
// same rule of a proxy's configuration file, as SET LIMIT does on one proxy.
// "limits/" sorts between "ha/" and "map": inside the range the fleet agent
// watches. Pure: keys, encoding and decoding only.
#pragma once
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace sp::coord {

struct LimitRecord {
  std::string kind;  // "user" | "digest"
  std::string name;  // the user, or the normalized statement
  uint32_t max_per_second = 0;
  uint32_t max_concurrent = 0;
  std::string set_by;  // "admin:<user>@<proxy>"
  std::string set_at;  // UTC, as SHOW LIMITS writes it
};

std::string limitsPrefix(std::string_view prefix);  // "<prefix>/limits/"
std::string limitKey(std::string_view prefix, std::string_view kind, std::string_view name);
bool isLimitKey(std::string_view prefix, std::string_view key);

std::string encodeLimitRecord(const LimitRecord& record);
// Errors name what is wrong: a kind other than user/digest, no name.
std::expected<LimitRecord, std::string> decodeLimitRecord(std::string_view json);

}  // namespace sp::coord
