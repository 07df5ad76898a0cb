// A "host:port" address as the config file writes it.
#pragma once
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace sp::conf {

struct HostPort {
  std::string host;
  uint16_t port = 0;
};

// "host:port" or "[v6addr]:port"; port 1..65535. Error text says what is wrong.
std::expected<HostPort, std::string> parseHostPort(std::string_view text);
// Inverse of parseHostPort ("[::1]:6033" for IPv6 hosts).
std::string formatHostPort(const HostPort& address);

}  // namespace sp::conf
