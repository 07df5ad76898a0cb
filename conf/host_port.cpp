#include <charconv>
#include <fmt/format.h>

#include "conf/host_port.hpp"

namespace sp::conf {

std::expected<HostPort, std::string> parseHostPort(std::string_view text) {
  std::string_view host;
  std::string_view port;
  if (text.starts_with('[')) {
    // Bracketed IPv6: "[::1]:3306".
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return std::unexpected(fmt::format("'{}' is not host:port ('[v6addr]:port' for IPv6)", text));
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return std::unexpected(fmt::format("'{}' is not host:port (the port is missing)", text));
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return std::unexpected(fmt::format("'{}': write IPv6 addresses as [addr]:port", text));
    }
  }
  if (host.empty()) return std::unexpected(fmt::format("'{}' has an empty host", text));
  if (host.find_first_of(" \t/") != std::string_view::npos) {
    return std::unexpected(fmt::format("'{}' has an invalid host", text));
  }
  unsigned long number = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (port.empty() || ec == std::errc::invalid_argument || end != port.data() + port.size()) {
    return std::unexpected(fmt::format("'{}' has a non-numeric port '{}'", text, port));
  }
  if (ec == std::errc::result_out_of_range || number < 1 || number > 65535) {
    return std::unexpected(fmt::format("port {} out of range [1, 65535]", port));
  }
  return HostPort{std::string(host), static_cast<uint16_t>(number)};
}

std::string formatHostPort(const HostPort& address) {
  if (address.host.find(':') != std::string::npos) {
    return fmt::format("[{}]:{}", address.host, address.port);
  }
  return fmt::format("{}:{}", address.host, address.port);
}

}  // namespace sp::conf
