#include "proxy/changes/changes_http.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include "conf/config.hpp"
#include <spdlog/spdlog.h>

#include "proxy/changes/change_json.hpp"
#include "proxy/changes/change_service.hpp"
#include "proxy/changes/changes_request.hpp"
#include "proxy/core/proxy_context.hpp"
#include "proxy/net/http_request.hpp"
#include "proxy/net/side_listener.hpp"
#include "proxy/observe/slow_log.hpp"

namespace sp::proxy::changes {

using namespace boost::asio::experimental::awaitable_operators;

namespace {

constexpr std::string_view kStreamHead =
    "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n"
    "Cache-Control: no-cache\r\nConnection: close\r\n\r\n";

std::string chunk(std::string_view body) { return fmt::format("{:x}\r\n{}\r\n", body.size(), body); }

// Writes within `timeout`; false when the peer is gone or read nothing that long.
awaitable<bool> send(tcp::socket& socket, std::string_view bytes, std::chrono::milliseconds timeout) {
  asio::steady_timer timer(socket.get_executor());
  timer.expires_after(timeout);
  auto got = co_await (asio::async_write(socket, asio::buffer(bytes), kNoThrow) || timer.async_wait(kNoThrow));
  if (got.index() == 1) co_return false;
  co_return !std::get<0>(std::get<0>(got));
}

// Reads the request head; an error response when it is not a good one.
awaitable<std::expected<HttpRequestHead, std::string>> readHead(tcp::socket& socket) {
  std::string head;
  asio::steady_timer timer(socket.get_executor());
  timer.expires_after(ChangesHttpServer::kRequestTimeout);
  auto got = co_await (asio::async_read_until(socket, asio::dynamic_buffer(head, ChangesHttpServer::kMaxRequestBytes),
                                              "\r\n\r\n", kNoThrow) ||
                       timer.async_wait(kNoThrow));
  if (got.index() == 1) co_return std::unexpected(httpResponse(408, "text/plain", "request timeout\n"));
  auto [ec, n] = std::get<0>(got);
  if (ec == asio::error::not_found) co_return std::unexpected(httpResponse(431, "text/plain", "request too large\n"));
  if (ec) co_return std::unexpected(std::string());
  auto request = parseHttpRequestHead(std::string_view(head).substr(0, n));
  if (!request) co_return std::unexpected(httpResponse(request.error(), "text/plain", "bad request\n"));
  if (request->method != "GET") co_return std::unexpected(httpResponse(405, "text/plain", "only GET\n"));
  if (request->path != "/changes") {
    co_return std::unexpected(httpResponse(404, "text/plain", "not found: the stream is at /changes\n"));
  }
  co_return std::move(*request);
}

std::string errorLine(std::string_view message) {
  std::string out = "{\"error\":";
  appendJsonString(out, message);
  return out + "}\n";
}

// Sends the stream's transactions, a heartbeat when idle, until the consumer
// is gone or the stream fails (an error line ends the body then).
awaitable<void> pump(tcp::socket& socket, ChangeStream& stream, ProxyContext& context) {
  const auto& config = context.config().changes;
  const std::chrono::milliseconds timeout(config.send_timeout_ms);
  const std::chrono::milliseconds idle(config.heartbeat_ms);
  for (;;) {
    auto txn = co_await stream.next(idle);
    std::string body;
    if (!txn) {
      const std::string last = chunk(errorLine("9183: " + txn.error())) + "0\r\n\r\n";
      co_await send(socket, last, timeout);
      co_return;
    }
    if (!*txn) {
      body = heartbeatJson(stream.position()) + "\n";
    } else {
      const std::string position = stream.position();
      for (size_t i = 0; i < (*txn)->rows.size(); ++i) {
        body += changeJson((*txn)->rows[i], **txn, position, i + 1 == (*txn)->rows.size());
        body += '\n';
      }
      countSent(context, **txn);
    }
    const std::string framed = chunk(body);
    if (!co_await send(socket, framed, timeout)) co_return;
  }
}

}  // namespace

std::string ChangesHttpServer::start() {
  const auto& config = service_.context().config().changes;
  asio::ip::address address;
  if (auto failed = server_.start(*config.listen, "changes.listen", "change stream port", address,
                                  [this](tcp::socket socket) { return serve(std::move(socket)); });
      !failed.empty()) {
    return failed;
  }
  spdlog::info("change stream listening on http://{}/changes", conf::formatHostPort(*config.listen));
  return {};
}

void ChangesHttpServer::stop() { server_.stop(); }

awaitable<void> ChangesHttpServer::serve(tcp::socket socket) {
  ProxyContext& context = service_.context();
  const auto& config = context.config().changes;
  const std::chrono::milliseconds timeout(config.send_timeout_ms);
  error_code ec;
  auto peer = socket.remote_endpoint(ec);
  if (ec) co_return;
  if (!peer.address().is_loopback() && !config.allow_remote) {
    const std::string refused = httpResponse(403, "text/plain", "shardproxy: the change stream serves loopback peers only\n");
    co_await send(socket, refused, timeout);
    co_return;
  }
  auto head = co_await readHead(socket);
  if (!head) {
    const std::string answer = head.error();
    if (!answer.empty()) co_await send(socket, answer, timeout);
    co_return;
  }
  auto request = parseChangesQuery(head->query);
  if (!request) {
    const std::string answer = httpResponse(400, "application/json", errorLine("9180: " + request.error()));
    co_await send(socket, answer, timeout);
    co_return;
  }
  auto slot = service_.admit();
  if (!slot) {
    const std::string answer = httpResponse(503, "application/json", errorLine(fmt::format(
        "9181: {} change streams are open (changes.max_consumers)", config.max_consumers)));
    co_await send(socket, answer, timeout);
    co_return;
  }
  const uint32_t consumer = slot->number();
  auto stream = co_await ChangeStream::open(context, *request, consumer);
  if (!stream) {
    const std::string answer = httpResponse(400, "application/json", errorLine("9180: " + stream.error()));
    co_await send(socket, answer, timeout);
    co_return;
  }
  const std::string_view stream_head = kStreamHead;
  if (!co_await send(socket, stream_head, timeout)) co_return;
  co_await pump(socket, **stream, context);
}

}  // namespace sp::proxy::changes
