#include "proxy/fleet/etcd_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

namespace sp::proxy {

using namespace boost::asio::experimental::awaitable_operators;

namespace {

constexpr size_t kReadChunk = 16 * 1024;

std::string describe(const conf::HostPort& endpoint) { return conf::formatHostPort(endpoint); }

awaitable<std::expected<tcp::socket, std::string>> connectTo(const conf::HostPort& endpoint) {
  auto executor = co_await asio::this_coro::executor;
  tcp::resolver resolver(executor);
  auto [rec, results] = co_await resolver.async_resolve(endpoint.host, std::to_string(endpoint.port), kNoThrow);
  if (rec) co_return std::unexpected("resolve: " + rec.message());
  tcp::socket socket(executor);
  auto [cec, ep] = co_await asio::async_connect(socket, results, kNoThrow);
  if (cec) co_return std::unexpected("connect: " + cec.message());
  socket.set_option(tcp::no_delay(true));
  co_return std::move(socket);
}

// Writes the request, then reads until `done(reader)` or the end of the
// connection. The body read so far goes into `body`.
template <class Done>
awaitable<std::expected<void, std::string>> exchange(tcp::socket& socket, const std::string& request,
                                                     coord::HttpResponseReader& reader, std::string& body, Done done) {
  auto [wec, written] = co_await asio::async_write(socket, asio::buffer(request), kNoThrow);
  if (wec) co_return std::unexpected("write: " + wec.message());
  std::string buffer(kReadChunk, '\0');
  while (!done(reader)) {
    auto [rec, n] = co_await socket.async_read_some(asio::buffer(buffer), kNoThrow);
    if (rec == asio::error::eof) {
      if (auto e = reader.finish(); e != coord::HttpReadError::kNone) {
        co_return std::unexpected(std::string(coord::httpReadErrorText(e)));
      }
      break;
    }
    if (rec) co_return std::unexpected("read: " + rec.message());
    if (auto e = reader.feed(std::string_view(buffer.data(), n)); e != coord::HttpReadError::kNone) {
      co_return std::unexpected(std::string(coord::httpReadErrorText(e)));
    }
    body += reader.takeBody();
  }
  body += reader.takeBody();
  co_return std::expected<void, std::string>{};
}

std::string statusProblem(int status, const std::string& body) {
  return fmt::format("HTTP {}: {}", status, body.substr(0, 200));
}

}  // namespace

EtcdStream::EtcdStream(tcp::socket socket, coord::HttpResponseReader reader, std::string early, uint64_t max_bytes,
                       std::string endpoint)
    : socket_(std::move(socket)), reader_(std::move(reader)), lines_(max_bytes), endpoint_(std::move(endpoint)) {
  lines_.append(early);
}

awaitable<std::expected<std::string, std::string>> EtcdStream::nextLine() {
  std::string buffer(kReadChunk, '\0');
  for (;;) {
    if (auto line = lines_.next()) {
      if (line->empty()) continue;
      co_return std::move(*line);
    }
    if (lines_.overflowed()) co_return std::unexpected("a watch message is larger than fleet.etcd.max_response_bytes");
    if (reader_.complete()) co_return std::unexpected("the watch stream ended");
    auto [ec, n] = co_await socket_.async_read_some(asio::buffer(buffer), kNoThrow);
    if (ec) co_return std::unexpected("watch stream: " + ec.message());
    if (auto e = reader_.feed(std::string_view(buffer.data(), n)); e != coord::HttpReadError::kNone) {
      co_return std::unexpected(std::string(coord::httpReadErrorText(e)));
    }
    lines_.append(reader_.takeBody());
  }
}

void EtcdStream::close() {
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

awaitable<std::expected<std::string, std::string>> EtcdClient::callOne(const conf::HostPort& endpoint,
                                                                       std::string_view target,
                                                                       const std::string& body, bool* reached) {
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor, std::chrono::milliseconds(config_.request_timeout_ms));
  std::optional<tcp::socket> socket;
  coord::HttpResponseReader reader(config_.max_response_bytes);
  std::string answer;
  auto work = [&]() -> awaitable<std::expected<void, std::string>> {
    auto s = co_await connectTo(endpoint);
    if (!s) co_return std::unexpected(s.error());
    if (reached) *reached = true;
    socket.emplace(std::move(*s));
    std::string request = coord::encodeHttpPost({describe(endpoint), std::string(target), body, false, {}});
    co_return co_await exchange(*socket, request, reader, answer,
                                [](const coord::HttpResponseReader& r) { return r.complete(); });
  };
  auto outcome = co_await (work() || timer.async_wait(kNoThrow));
  if (socket) {
    error_code ignored;
    socket->close(ignored);
  }
  if (outcome.index() == 1) {
    co_return std::unexpected(fmt::format("no answer within {} ms (fleet.etcd.request_timeout_ms)",
                                          config_.request_timeout_ms));
  }
  auto& result = std::get<0>(outcome);
  if (!result) co_return std::unexpected(result.error());
  if (reader.status() != 200) co_return std::unexpected(statusProblem(reader.status(), answer));
  co_return answer;
}

awaitable<std::expected<std::unique_ptr<EtcdStream>, std::string>> EtcdClient::streamOne(
    const conf::HostPort& endpoint, std::string_view target, const std::string& body) {
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor, std::chrono::milliseconds(config_.request_timeout_ms));
  std::optional<tcp::socket> socket;
  // A watch stream has no end: its length is bounded per line (LineSplitter).
  auto reader = std::make_unique<coord::HttpResponseReader>(UINT64_MAX);
  std::string early;  // body bytes that came with the head
  auto work = [&]() -> awaitable<std::expected<void, std::string>> {
    auto s = co_await connectTo(endpoint);
    if (!s) co_return std::unexpected(s.error());
    socket.emplace(std::move(*s));
    coord::HttpPost post{describe(endpoint), std::string(target), body, true, {}};
    // etcd cancels the watch when its member loses the leader (a member cut
    // off from the others would otherwise keep the stream open and silent).
    post.headers.emplace_back("Grpc-Metadata-Hasleader", "true");
    std::string request = coord::encodeHttpPost(post);
    co_return co_await exchange(*socket, request, *reader, early,
                                [](const coord::HttpResponseReader& r) { return r.headComplete(); });
  };
  auto outcome = co_await (work() || timer.async_wait(kNoThrow));
  if (outcome.index() == 1 || !std::get<0>(outcome) || reader->status() != 200) {
    std::string why = outcome.index() == 1 ? fmt::format("no answer within {} ms (fleet.etcd.request_timeout_ms)",
                                                         config_.request_timeout_ms)
                      : !std::get<0>(outcome) ? std::get<0>(outcome).error()
                                              : statusProblem(reader->status(), early);
    if (socket) {
      error_code ignored;
      socket->close(ignored);
    }
    co_return std::unexpected(why);
  }
  auto stream = std::make_unique<EtcdStream>(std::move(*socket), std::move(*reader), std::move(early),
                                             config_.max_response_bytes, describe(endpoint));
  co_return stream;
}

template <class T, class One>
awaitable<std::expected<T, std::string>> EtcdClient::failover(One one) {
  const auto& endpoints = config_.etcd_endpoints;
  std::string problems;
  size_t first = preferred_.load() % endpoints.size();
  for (size_t i = 0; i < endpoints.size(); ++i) {
    size_t index = (first + i) % endpoints.size();
    auto r = co_await one(endpoints[index]);
    if (r) {
      preferred_.store(index);
      co_return r;
    }
    problems += fmt::format("{}{}: {}", problems.empty() ? "" : "; ", describe(endpoints[index]), r.error());
  }
  co_return std::unexpected(problems);
}

awaitable<std::expected<std::string, std::string>> EtcdClient::call(std::string target, std::string body,
                                                                    bool* reached) {
  co_return co_await failover<std::string>(
      [&](const conf::HostPort& endpoint) { return callOne(endpoint, target, body, reached); });
}

awaitable<std::expected<std::unique_ptr<EtcdStream>, std::string>> EtcdClient::stream(std::string target,
                                                                                     std::string body) {
  co_return co_await failover<std::unique_ptr<EtcdStream>>(
      [&](const conf::HostPort& endpoint) { return streamOne(endpoint, target, body); });
}

}  // namespace sp::proxy
