// The durable commit decisions of global transactions (docs/routing.md,
// "Transactions across backends"): one row per global id decided to commit,
// written with SQLite synchronous=FULL (fsync) before any XA COMMIT is
// sent, deleted once every branch committed. Recovery commits a prepared
// branch whose id has a row here and rolls back one that has none.
// Thread-safe (one mutex; a write is one small fsync'ed transaction).
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <expected>
#include <mutex>
#include <string>
#include <vector>

namespace sp::proxy {

class XaDecisionLog {
 public:
  static std::expected<std::unique_ptr<XaDecisionLog>, std::string> open(const std::string& path);
  ~XaDecisionLog();
  XaDecisionLog(const XaDecisionLog&) = delete;
  XaDecisionLog& operator=(const XaDecisionLog&) = delete;

  bool recordCommit(const std::string& gtrid, int64_t unix_ms);
  bool committed(const std::string& gtrid);
  void forget(const std::string& gtrid);
  // Decisions written before `unix_ms` (recovery's clean-up candidates).
  std::vector<std::string> decidedBefore(int64_t unix_ms);
  size_t size();

 private:
  explicit XaDecisionLog(sqlite3* db) : db_(db) {}
  std::mutex mu_;
  sqlite3* db_;
};

}  // namespace sp::proxy
