// The change stream's front (docs/changes.md): admits consumers up to
// changes.max_consumers (each gets its own readers' server_id), serves
// GET /changes on changes.listen (changes_http.hpp) and SHOW CHANGES on the
// admin port. Set at start-up when changes.enabled; thread-safe.
#pragma once
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "proxy/core/admin_reply.hpp"
#include "proxy/changes/change_stream.hpp"

namespace sp::proxy::changes {

class ChangesHttpServer;

// A consumer's place among changes.max_consumers; released when destroyed.
class ConsumerSlot {
 public:
  ConsumerSlot(class ChangeService& service, uint32_t number) : service_(&service), number_(number) {}
  ConsumerSlot(const ConsumerSlot&) = delete;
  ConsumerSlot& operator=(const ConsumerSlot&) = delete;
  ~ConsumerSlot();
  uint32_t number() const { return number_; }

 private:
  ChangeService* service_;
  uint32_t number_;
};

// SHOW CHANGES [FOR t1, t2] [FROM '<position>'] [LIMIT n] [WAIT ms] (changes_command.cpp).
struct ChangesRead {
  StreamRequest request;
  uint64_t limit = 100;    // row changes at most (whole transactions: one may go over)
  uint64_t wait_ms = 2000; // returns when caught up, or after this long
};

class ChangeService {
 public:
  explicit ChangeService(ProxyContext& context);
  ~ChangeService();

  // Starts the HTTP endpoint when changes.listen is set; an error message.
  std::string start();
  void stop();

  std::unique_ptr<ConsumerSlot> admit();
  // SHOW CHANGES: runs on the caller's executor. (An lvalue: GCC 12
  // destroys temporaries passed to a coroutine twice.)
  awaitable<AdminReply> read(const ChangesRead& read);

  ProxyContext& context() { return context_; }

 private:
  friend class ConsumerSlot;
  void release(uint32_t number);

  ProxyContext& context_;
  std::mutex mutex_;
  std::vector<bool> taken_;
  std::unique_ptr<ChangesHttpServer> http_;
};

// The lag of a transaction sent now (seconds since its commit, >= 0).
int64_t lagSeconds(const ChangeTransaction& txn);
// Counts a transaction sent to a consumer (metrics).
void countSent(ProxyContext& context, const ChangeTransaction& txn);

}  // namespace sp::proxy::changes
