// Server-side prepared statements that exist on one backend connection,
// keyed by their SQL text. Client statements are proxy-level objects; each
// execute runs on whatever pooled connection it borrows, preparing the
// physical SQL there the first time (lazily) and reusing it afterwards. The
// cache is bounded (LRU): evicted statements are closed on the backend, so a
// client that prepares 100k distinct statements cannot grow a connection's
// server-side state without limit.
#pragma once
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace sp::proxy {

struct BackendStatement {
  uint32_t id = 0;          // the backend's statement id
  uint16_t num_params = 0;
  uint16_t num_columns = 0;
};

class BackendStatementCache {
 public:
  explicit BackendStatementCache(size_t capacity = 256) : capacity_(capacity) {}

  std::optional<BackendStatement> find(const std::string& sql);
  // Adds a statement; returns the ids of statements evicted to stay bounded
  // (the caller closes them on the backend).
  std::vector<uint32_t> insert(const std::string& sql, BackendStatement statement);
  // Forgets one statement (the caller closes it on the backend): one that
  // reads a table of the moment, such as a temporary table about to go.
  std::optional<BackendStatement> erase(const std::string& sql);
  // The backend forgot every statement (COM_RESET_CONNECTION, reconnect).
  void clear();
  size_t size() const { return index_.size(); }

 private:
  using Lru = std::list<std::pair<std::string, BackendStatement>>;
  size_t capacity_;
  Lru lru_;  // most recently used first
  std::unordered_map<std::string, Lru::iterator> index_;
};

}  // namespace sp::proxy
