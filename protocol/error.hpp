// Decode errors of the wire codec. Kept tiny on the hot path (Boost.MySQL style);
// the session turns them into a client ERR packet or a closed connection.
#pragma once
#include <cstdint>
#include <expected>
#include <string_view>

namespace sp::protocol {

enum class DecodeError : uint8_t {
  kIncomplete,     // the payload ended before the field did (truncated message)
  kProtocolValue,  // a field holds a value the protocol does not allow
  kExtraBytes,     // bytes left over after the last field
  kTooLarge,       // a length exceeds the configured or protocol maximum
};

std::string_view toString(DecodeError e);

template <class T>
using DecodeResult = std::expected<T, DecodeError>;

}  // namespace sp::protocol
