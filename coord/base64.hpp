// Base64 (RFC 4648, standard alphabet, '=' padding): the etcd JSON gateway
// carries keys and values as base64 strings.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace sp::coord {

std::string base64Encode(std::string_view bytes);
// nullopt: a character outside the alphabet, bad padding, or a length that is
// not a multiple of 4.
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace sp::coord
