// The statements one client prepared. The client sees proxy statement ids;
// the physical statements live in backend connections' caches, so a
// prepared statement survives multiplexing, reconnects and shard-map reloads
// (each execute plans again with its bound values).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "protocol/prepared.hpp"

namespace sp::proxy {

struct ClientStatement {
  std::string sql;                    // the logical SQL as the client sent it
  protocol::StmtParamState params;    // parameter count, last bound types, long-data flags
  std::vector<std::string> long_data; // COM_STMT_SEND_LONG_DATA bytes per parameter
  uint16_t num_columns = 0;
  // Long data past a limit was dropped: the next execute is answered with an
  // error (the server, too, reports long-data errors at execute).
  bool long_data_too_large = false;
  // A diagnostics statement the session answers from its own area
  // (prepared_diagnostics.cpp): never prepared on a backend.
  bool local_diagnostics = false;
  // SET shardproxy_reads: prepared and executed by the session itself (session_reads.cpp).
  bool reads_setting = false;
  // SHOW [FULL] PROCESSLIST of an application user: the proxy's sessions
  // (session_processlist.cpp); never prepared on a backend.
  bool local_processlist = false;
  // DDL on a logical table: prepared by the session itself, each execute
  // handed to the schema-change runner (session_schema_change.cpp).
  bool schema_change = false;
  // A statement of the logical catalog (SHOW TABLES, DESCRIBE, information_schema
  // for an application user): prepared on a backend for its metadata only,
  // each execute runs as text through the catalog (catalog_executor.cpp).
  bool logical_catalog = false;
  // SELECT ... FROM information_schema.PROCESSLIST of an application user:
  // prepared on the default backend for its metadata (the temporary table
  // the execute reads has the same structure), each execute run by
  // session_processlist_select.cpp with the client's bound values.
  bool logical_processlist_select = false;
  // A statement whose text form the session carries out itself, never a
  // backend (the same rule set for both protocols, prepared_local.cpp):
  // prepared on a backend for its metadata only (the server's own prepare
  // answer and errors), each execute run by the proxy.
  enum class Intercepted : uint8_t {
    kNone,
    kKill,          // KILL [QUERY] <id or ?>: the id is a proxy connection id
    kConnectionId,  // SELECT CONNECTION_ID(): the proxy's id, not a backend thread's
  };
  Intercepted intercepted = Intercepted::kNone;
  std::string connection_id_column;  // kConnectionId: the column name the client sees
};

class ClientStatements {
 public:
  // nullptr when the session already holds `limit` statements
  // (limits.max_prepared_statements_per_session).
  ClientStatement* add(ClientStatement statement, uint32_t& id, size_t limit) {
    if (statements_.size() >= limit) return nullptr;
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
  void erase(uint32_t id) {
    if (ClientStatement* s = find(id); s && id != protocol::kLastPreparedStatementId) clearLongData(*s);
    statements_.erase(id);
  }
  void clear() {
    statements_.clear();
    long_data_bytes_ = 0;
  }
  size_t size() const { return statements_.size(); }

  // Keeps a COM_STMT_SEND_LONG_DATA chunk for `param` (already noted in
  // s.params), unless the parameter would pass `param_limit` bytes or the
  // session's long data `session_limit`: then the chunk is dropped and the
  // statement marked long_data_too_large.
  void appendLongData(ClientStatement& s, uint16_t param, std::string_view data, uint64_t param_limit,
                      uint64_t session_limit) {
    if (s.long_data.size() <= param) s.long_data.resize(size_t(param) + 1);
    std::string& buffer = s.long_data[param];
    if (s.long_data_too_large || buffer.size() + data.size() > param_limit ||
        long_data_bytes_ + data.size() > session_limit) {
      s.long_data_too_large = true;
      return;
    }
    buffer.append(data);
    long_data_bytes_ += data.size();
  }
  // After an execute or a reset: the statement's long data is gone.
  void clearLongData(ClientStatement& s) {
    for (auto& buffer : s.long_data) {
      long_data_bytes_ -= buffer.size();
      std::string().swap(buffer);  // give the memory back, not only the size
    }
    s.long_data_too_large = false;
  }
  uint64_t longDataBytes() const { return long_data_bytes_; }

 private:
  std::unordered_map<uint32_t, ClientStatement> statements_;
  uint32_t next_id_ = 1;
  uint32_t last_id_ = 0;
  uint64_t long_data_bytes_ = 0;  // held by all statements together
};

}  // namespace sp::proxy
