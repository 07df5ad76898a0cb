#include "proxy/session/local_infile.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

namespace sp::proxy {

awaitable<InfileRelayed> SessionInfileSource::relay(protocol::ByteView request, uint8_t client_seq,
                                                    ShardChannel& shard, uint8_t shard_seq) {
  using namespace boost::asio::experimental::awaitable_operators;
  InfileRelayed out;
  uint8_t next_client = client_.append(request, client_seq);
  if (!co_await client_.flush()) {
    out.client_failed = true;
    co_return out;
  }
  auto executor = co_await asio::this_coro::executor;
  bool forwarding = true;
  for (;;) {
    asio::steady_timer timer(executor, read_timeout_);
    auto read = co_await (client_.read() || timer.async_wait(kNoThrow));
    if (read.index() == 1 || !std::get<0>(read)) {
      // Gone, broken, or silent for net_read_timeout_s: the server still
      // waits for the file, so the caller cuts its connection too.
      out.client_failed = true;
      co_return out;
    }
    const StreamMessage& message = *std::get<0>(read);
    next_client = static_cast<uint8_t>(message.sequence_id + 1);
    const bool last = message.payload.empty();
    out.bytes += message.payload.size();
    if (forwarding && max_bytes_ != 0 && out.bytes > max_bytes_) {
      // Over the limit: read the rest and drop it, so that the client's
      // next command starts on a packet boundary; the caller cuts the server.
      forwarding = false;
      out.over_limit = true;
    }
    if (forwarding) {
      shard_seq = shard.writeFilePacket(message.payload, shard_seq);
      if (!co_await shard.flush()) {
        out.backend_failed = true;
        forwarding = false;  // the client's rest is still read: its next command must start clean
      }
    }
    if (last) break;
  }
  out.next_client_seq = next_client;
  co_return out;
}

}  // namespace sp::proxy
