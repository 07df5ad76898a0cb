// The etcd v3 JSON gateway's messages (etcd 3.4: /v3/kv/range, /v3/kv/put,
// /v3/kv/txn, /v3/watch, /v3/lease/grant, /v3/lease/keepalive): request
// bodies built and responses decoded here. Keys and values are base64 in
// JSON; int64 fields are JSON strings; fields at their zero value are left
// out by the gateway (a failed txn has no "succeeded"). Pure.
#pragma once
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace sp::coord {

struct EtcdKv {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;
};

struct EtcdHeader {
  int64_t revision = 0;
  uint64_t member_id = 0;
  uint64_t raft_term = 0;
};

struct EtcdRangeResponse {
  EtcdHeader header;
  std::vector<EtcdKv> kvs;
};

struct EtcdTxnResponse {
  EtcdHeader header;
  bool succeeded = false;
  std::vector<EtcdKv> range_kvs;  // what a request_range of the branch taken returned
};

struct EtcdLeaseResponse {  // grant and keepalive
  EtcdHeader header;
  int64_t id = 0;
  int64_t ttl = 0;  // keepalive: 0 (or absent) means the lease no longer exists
};

struct EtcdWatchEvent {
  bool is_delete = false;
  EtcdKv kv;
};

struct EtcdWatchMessage {
  EtcdHeader header;
  int64_t watch_id = 0;
  bool created = false;
  bool canceled = false;
  int64_t compact_revision = 0;  // set when the start revision was compacted away
  std::string cancel_reason;
  std::vector<EtcdWatchEvent> events;
};

// The end of a prefix range: the prefix with its last byte incremented
// (trailing 0xff bytes dropped); "\0" for an empty or all-0xff prefix.
std::string etcdPrefixEnd(std::string_view prefix);

// keys_only: the kvs come without values (revisions only).
std::string etcdRangeRequest(std::string_view key, bool prefix, bool keys_only = false);
std::string etcdPutRequest(std::string_view key, std::string_view value, int64_t lease = 0);
std::string etcdDeleteRequest(std::string_view key, bool prefix);
// A key that must still be the one created at `create_revision` for a
// guarded put to happen (a fence request: the map of a move's switch is
// published only while its fence stands).
struct EtcdGuard {
  std::string key;
  int64_t create_revision = 0;
};

// Put `value` only if `key` was last modified at `expected_mod_revision`
// (0: only if the key does not exist) and, with a guard, only while the
// guard's key stands; on failure the txn reads `key`. `lease`: the put's
// lease (0: none).
std::string etcdCasPutRequest(std::string_view key, int64_t expected_mod_revision, std::string_view value,
                              const EtcdGuard* guard = nullptr, int64_t lease = 0);
// Creates `key` = `value` (no lease) only if it does not exist and, with a
// fence, only while the fence's key carries the fence's lease (a proxy's
// member key: the write is refused once that proxy's lease is gone or its
// key was re-registered by another run). On failure the txn reads `key`.
struct EtcdLeaseFence {
  std::string key;
  int64_t lease = 0;
};
std::string etcdFencedCreateRequest(std::string_view key, std::string_view value, const EtcdLeaseFence* fence);
// Deletes `key` only while it is the one created at `create_revision` (a
// lock released by its holder never removes a successor's).
std::string etcdGuardedDeleteRequest(std::string_view key, int64_t create_revision);
std::string etcdLeaseGrantRequest(int64_t ttl_seconds);
std::string etcdLeaseKeepAliveRequest(int64_t id);
std::string etcdLeaseRevokeRequest(int64_t id);
std::string etcdWatchCreateRequest(std::string_view key, bool prefix, int64_t start_revision);
// A watch of the keys in [key, range_end).
std::string etcdWatchRangeRequest(std::string_view key, std::string_view range_end, int64_t start_revision);

// Errors: the JSON is malformed, or the gateway answered an error object
// ({"error": "...", "code": 14, "message": "..."}): its message.
std::expected<EtcdRangeResponse, std::string> parseEtcdRange(std::string_view json);
std::expected<EtcdHeader, std::string> parseEtcdPut(std::string_view json);
std::expected<EtcdTxnResponse, std::string> parseEtcdTxn(std::string_view json);
std::expected<EtcdLeaseResponse, std::string> parseEtcdLeaseGrant(std::string_view json);
// A keepalive's streamed answer: {"result": {...}}.
std::expected<EtcdLeaseResponse, std::string> parseEtcdLeaseKeepAlive(std::string_view json);
// One line of the /v3/watch stream: {"result": {...}} or {"error": {...}}.
std::expected<EtcdWatchMessage, std::string> parseEtcdWatchLine(std::string_view json);

}  // namespace sp::coord
