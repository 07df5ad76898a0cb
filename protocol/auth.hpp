// Authentication plugins' scrambles.
#pragma once
#include <array>
#include <string>
#include <string_view>

namespace sp::protocol {

inline constexpr std::string_view kNativePasswordPlugin = "mysql_native_password";
inline constexpr std::string_view kCachingSha2Plugin = "caching_sha2_password";
inline constexpr size_t kScrambleLength = 20;

// mysql_native_password: SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password))).
// Empty password gives an empty response.
std::string nativePasswordResponse(std::string_view password, std::string_view scramble);

// Server side check of a client's mysql_native_password response.
bool verifyNativePassword(std::string_view password, std::string_view scramble,
                          std::string_view response);

// The mysql_native_password hash of a password, as MariaDB's PASSWORD()
// prints it: "*" + 40 upper-case hex digits of SHA1(SHA1(password)); empty
// for an empty password.
std::string nativePasswordHash(std::string_view password);

// The same check from the hash alone (the "*HEX" text): the server needs only
// SHA1(SHA1(password)), so a config can hold the hash instead of the password.
// An empty hash accepts only an empty response. A malformed hash accepts nothing.
bool verifyNativePasswordHash(std::string_view hash, std::string_view scramble, std::string_view response);

// caching_sha2_password fast-auth response:
// SHA256(password) XOR SHA256(SHA256(SHA256(password)) + scramble). Empty password -> empty.
std::string cachingSha2Response(std::string_view password, std::string_view scramble);

// 20 random printable-safe bytes (no NUL, as servers send), from a CSPRNG.
std::string makeScramble();

}  // namespace sp::protocol
