// One consumer's change stream: a reader per configured backend
// (change_reader.hpp) and their merge. next() hands out committed
// transactions with row changes of the streamed tables, in each backend's
// commit order, the oldest commit first among the backends that have one
// ready; a transaction at a cut-over mark waits until its source backend's
// stream has passed the source's GTID (proxy/core/cutover_mark.hpp), so a
// moved key's changes stay in commit order. position() is where a consumer
// resumes after the last transaction handed out. Runs on one executor: the
// caller's (the HTTP server's or the admin port's thread).
#pragma once
#include <chrono>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proxy/changes/change_reader.hpp"

namespace sp::proxy::changes {

struct StreamRequest {
  std::vector<std::string> tables;       // logical tables; empty: changes.tables (or every table)
  std::optional<ChangePosition> from;    // nullopt: from now
};

class ChangeStream {
 public:
  // Checks the tables, reads each backend's GTID position when `from` does
  // not name it (now), and starts the readers. `consumer`: a number unique
  // among open streams (the readers' server_id is changes.replica_server_id + it).
  // (Arguments are lvalues at every call: GCC 12 destroys temporaries passed to a coroutine twice.)
  static awaitable<std::expected<std::unique_ptr<ChangeStream>, std::string>> open(ProxyContext& context,
                                                                                   const StreamRequest& request,
                                                                                   uint32_t consumer);
  ~ChangeStream();

  // The next transaction with row changes, or nullopt when none came within
  // `idle`; an error when a reader ended (the stream cannot go on in order).
  awaitable<std::expected<std::optional<ChangeTransaction>, std::string>> next(std::chrono::milliseconds idle);
  // Whether every reader has reached the end of its binary log and nothing is queued.
  bool caughtUp() const;
  std::string position() const { return encodePosition(emitted_); }
  void close();

  ChangeStream(ProxyContext& context, std::shared_ptr<StreamSignals> signals);

 private:
  // The queue whose head may go next (oldest commit first), or nullptr.
  ReaderQueue* pick();

  ProxyContext& context_;
  std::shared_ptr<StreamSignals> signals_;
  std::vector<std::shared_ptr<ReaderQueue>> queues_;
  ChangePosition emitted_;
  double tokens_ = 0;  // rate limit (changes.max_events_per_second)
  std::chrono::steady_clock::time_point refilled_;
  uint32_t rate_ = 0;
};

}  // namespace sp::proxy::changes
