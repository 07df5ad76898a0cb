#include "protocol/error.hpp"

namespace sp::protocol {

std::string_view toString(DecodeError e) {
  switch (e) {
    case DecodeError::kIncomplete:
      return "incomplete message";
    case DecodeError::kProtocolValue:
      return "protocol value error";
    case DecodeError::kExtraBytes:
      return "extra bytes after message";
    case DecodeError::kTooLarge:
      return "message too large";
  }
  return "unknown decode error";
}

}  // namespace sp::protocol
