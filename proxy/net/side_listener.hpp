#pragma once

#include <string>

#include "conf/host_port.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

// Resolves `hp` and opens, binds and listens `acceptor` on it: the setup the
// admin and metrics ports share. Returns an empty string, or what failed in
// words naming `what` ("admin_listen" resolution, "admin port" listening).
// `address` receives the bound address (callers warn when it is not loopback).
std::string listenOn(asio::io_context& io, asio::ip::tcp::acceptor& acceptor, const conf::HostPort& hp,
                     const std::string& key, const std::string& port_name, asio::ip::address& address);

}  // namespace sp::proxy
