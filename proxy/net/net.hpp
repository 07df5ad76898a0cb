// Asio aliases shared by the proxy. Coroutines report errors as values
// (as_tuple) instead of exceptions: a closed socket is routine for a proxy.
#pragma once
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace sp::proxy {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
template <class T>
using awaitable = asio::awaitable<T>;

inline constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

}  // namespace sp::proxy
