// runEtcdCall (etcd_client.hpp): a private io_context per blocking call.
#pragma once
#include <functional>
#include <optional>

namespace sp::proxy {

template <class T>
T runEtcdCall(std::function<awaitable<T>(EtcdClient&)> fn, EtcdClient& client) {
  asio::io_context io;
  std::optional<T> result;
  asio::co_spawn(io, [&]() -> awaitable<void> { result.emplace(co_await fn(client)); }, asio::detached);
  io.run();
  return std::move(*result);
}

}  // namespace sp::proxy
