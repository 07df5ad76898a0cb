#include "proxy/backend/backend_statements.hpp"

namespace sp::proxy {

std::optional<BackendStatement> BackendStatementCache::find(const std::string& sql) {
  auto it = index_.find(sql);
  if (it == index_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

std::vector<uint32_t> BackendStatementCache::insert(const std::string& sql, BackendStatement statement) {
  std::vector<uint32_t> evicted;
  if (auto it = index_.find(sql); it != index_.end()) {
    evicted.push_back(it->second->second.id);
    lru_.erase(it->second);
    index_.erase(it);
  }
  lru_.emplace_front(sql, statement);
  index_[sql] = lru_.begin();
  while (index_.size() > capacity_) {
    evicted.push_back(lru_.back().second.id);
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return evicted;
}

std::optional<BackendStatement> BackendStatementCache::erase(const std::string& sql) {
  auto it = index_.find(sql);
  if (it == index_.end()) return std::nullopt;
  BackendStatement statement = it->second->second;
  lru_.erase(it->second);
  index_.erase(it);
  return statement;
}

void BackendStatementCache::clear() {
  lru_.clear();
  index_.clear();
}

}  // namespace sp::proxy
