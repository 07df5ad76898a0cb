// The statements one client prepared. The client sees proxy statement ids;
// the physical statements live in backend connections' caches, so a
// prepared statement survives multiplexing, reconnects and shard-map reloads
// (each execute plans again with its bound values).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/prepared.hpp"

namespace sp::proxy {

struct ClientStatement {
  std::string sql;                    // the logical SQL as the client sent it
  protocol::StmtParamState params;    // parameter count, last bound types, long-data flags
  std::vector<std::string> long_data; // COM_STMT_SEND_LONG_DATA bytes per parameter
  uint16_t num_columns = 0;
};

class ClientStatements {
 public:
  // MySQL's default max_prepared_stmt_count is per server; this bounds one session.
  static constexpr size_t kMaxPerSession = 16382;

  // nullptr when the session already holds kMaxPerSession statements.
  ClientStatement* add(ClientStatement statement, uint32_t& id) {
    if (statements_.size() >= kMaxPerSession) return nullptr;
    id = next_id_++;
    if (next_id_ == 0 || next_id_ == protocol::kLastPreparedStatementId) next_id_ = 1;
    last_id_ = id;
    return &(statements_[id] = std::move(statement));
  }
  // Resolves MariaDB's "the statement prepared last" id (0xffffffff).
  ClientStatement* find(uint32_t id) {
    if (id == protocol::kLastPreparedStatementId) id = last_id_;
    auto it = statements_.find(id);
    return it == statements_.end() ? nullptr : &it->second;
  }
  void erase(uint32_t id) { statements_.erase(id); }
  void clear() { statements_.clear(); }
  size_t size() const { return statements_.size(); }

 private:
  std::unordered_map<uint32_t, ClientStatement> statements_;
  uint32_t next_id_ = 1;
  uint32_t last_id_ = 0;
};

}  // namespace sp::proxy
