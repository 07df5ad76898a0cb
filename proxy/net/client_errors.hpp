// The MySQL errors the proxy itself sends to clients (errno + SQLSTATE),
// so clients and drivers react to them as they would to a server's.
#pragma once
#include <cstdint>
#include <string>

#include "protocol/generic_packets.hpp"

namespace sp::proxy::client_error {

struct Code {
  uint16_t number;
  const char* sql_state;
};

inline constexpr Code kAccessDenied{1045, "28000"};       // ER_ACCESS_DENIED_ERROR
inline constexpr Code kTooManyConnections{1040, "08004"}; // ER_CON_COUNT_ERROR
inline constexpr Code kTooManyUserConnections{1203, "42000"}; // ER_TOO_MANY_USER_CONNECTIONS
inline constexpr Code kUserLimitReached{1226, "42000"};   // ER_USER_LIMIT_REACHED
inline constexpr Code kUnknownCommand{1047, "08S01"};     // ER_UNKNOWN_COM_ERROR
inline constexpr Code kHandshake{1043, "08S01"};          // ER_HANDSHAKE_ERROR
inline constexpr Code kPacketTooLarge{1153, "08S01"};     // ER_NET_PACKET_TOO_LARGE
inline constexpr Code kMalformedPacket{1835, "HY000"};    // ER_MALFORMED_PACKET
inline constexpr Code kPacketsOutOfOrder{1156, "08S01"};  // ER_NET_PACKETS_OUT_OF_ORDER
// Backend failures use the proxy's 9xxx range, not the look-alike client codes
// 2003/2013: those are reserved for client libraries, and libmariadb rejects
// an ERR packet carrying one as "2027 Received malformed packet".
inline constexpr Code kBackendUnavailable{9001, "HY000"}; // cannot reach the backend
// A statement waited for its backend's primary switch (SWITCHOVER / FAILOVER)
// longer than ha.switchover_timeout_ms: nothing ran; retry.
inline constexpr Code kPrimarySwitching{9141, "HY000"};
inline constexpr Code kBackendLost{9002, "HY000"};        // backend connection lost during a statement
// A statement's backend stopped answering its health probes for
// ha.failure_timeout_ms (a hung server): the proxy cut the statement's
// connection. Unlike 9001 the statement was sent: it may have taken effect.
inline constexpr Code kBackendStoppedAnswering{9143, "HY000"};
// backends[].query_timeout_ms passed: MariaDB's own code for max_statement_time (the server's query is killed)
inline constexpr Code kStatementTimeout{1969, "70100"};
// LOAD DATA LOCAL refused (users[].local_infile off, or the client did not offer CLIENT_LOCAL_FILES): the server's code
inline constexpr Code kLocalInfileDisabled{4166, "HY000"};
// a LOAD DATA LOCAL file passed limits.local_infile_max_bytes
inline constexpr Code kLocalInfileTooLarge{9144, "HY000"};
inline constexpr Code kShardTimeout{9003, "HY000"};       // a shard did not answer within scatter.shard_timeout_ms
// 40001 (serialization failure, as for a deadlock): drivers and frameworks
// treat it as "the transaction was rolled back, retry it".
inline constexpr Code kTransactionLost{9004, "40001"};    // the session's transaction died with its backend connection
inline constexpr Code kShardColumnsDiffer{9005, "HY000"}; // shards answered a scatter with different columns (schema drift)
// Retryable: the memory every concurrent scatter merge holds together is
// spent (scatter.max_merge_bytes_total); the statement freed what it held.
inline constexpr Code kMergeMemoryExhausted{9006, "HY000"};
inline constexpr Code kNotSupported{1235, "42000"};       // ER_NOT_SUPPORTED_YET
inline constexpr Code kUnsupportedPs{1295, "HY000"};      // ER_UNSUPPORTED_PS
inline constexpr Code kServerShutdown{1053, "08S01"};     // ER_SERVER_SHUTDOWN
inline constexpr Code kGeneric{1105, "HY000"};            // ER_UNKNOWN_ERROR
inline constexpr Code kWrongValueForVar{1231, "42000"};   // ER_WRONG_VALUE_FOR_VAR
inline constexpr Code kUnsupported{9113, "HY000"};        // a statement shape the proxy does not route (routing/route_error.hpp)
inline constexpr Code kCrossBackend{9120, "HY000"};       // shardproxy: state bound to another backend
// A write to keys an online move holds for its cut-over waited too long or
// found too many waiting (write_hold.hpp): retryable, nothing ran.
inline constexpr Code kWriteHoldTimeout{9135, "HY000"};
// statement_limits: (proxy/core/statement_limit_table.hpp): retryable, nothing ran.
inline constexpr Code kStatementRateLimited{9160, "HY000"};         // over max_per_second
inline constexpr Code kStatementConcurrencyLimited{9161, "HY000"};  // at max_concurrent
inline constexpr Code kWriteHoldFull{9136, "HY000"};
// Writes to keys a fleet fence holds, on a proxy cut off from etcd (write_hold.hpp).
inline constexpr Code kFleetUnsynchronised{9138, "HY000"};
// A statement waited for its server's concurrency budget
// (backends[].max_active_statements) longer than overload.queue_timeout_ms, or
// found overload.max_queued_per_backend waiting already: retryable, nothing ran.
inline constexpr Code kOverloadTimeout{9145, "HY000"};
inline constexpr Code kOverloadQueueFull{9146, "HY000"};
// A write to one shard-key value waited for one of the key's slots
// (overload.hot_key_concurrency) longer than overload.queue_timeout_ms, or
// found overload.hot_key_max_queued writes waiting for it, or its turn under
// overload.hot_key_max_per_second is further than overload.queue_timeout_ms
// away (9147): retryable, nothing ran.
inline constexpr Code kHotKeyPaced{9147, "HY000"};
inline constexpr Code kHotKeyTimeout{9148, "HY000"};
inline constexpr Code kHotKeyQueueFull{9149, "HY000"};
// The change stream (proxy/changes/, docs/changes.md), on the admin port
// (SHOW CHANGES) and as HTTP statuses of GET /changes.
inline constexpr Code kChangesBadRequest{9180, "HY000"};     // malformed position, unknown table, bad parameter (HTTP 400)
inline constexpr Code kChangesTooManyConsumers{9181, "HY000"};  // changes.max_consumers streams open (HTTP 503)
inline constexpr Code kChangesOff{9182, "HY000"};            // changes: not enabled
inline constexpr Code kChangesReaderFailed{9183, "HY000"};   // a backend's reader ended: the stream cannot go on in order
// Cross-backend transactions (transactions.cross_backend: atomic; docs/routing.md).
inline constexpr Code kXaDecisionLog{9170, "HY000"};       // the commit decision could not be written: rolled back
inline constexpr Code kXaSavepoint{9171, "42000"};         // SAVEPOINT / ROLLBACK TO across branches
inline constexpr Code kXaUnsupported{9172, "42000"};       // a statement form a global transaction does not support
inline constexpr Code kXaReservedXid{9173, "42000"};       // a client's XA statement naming the proxy's own ids
inline constexpr Code kXaDecisionUnknown{9174, "HY000"};   // etcd did not confirm the decision: in doubt, recovery finishes it
inline constexpr Code kSplitWritePartial{9121, "HY000"};  // a split INSERT's parts failed on some shards
inline constexpr Code kNoSuchThread{1094, "HY000"};       // ER_NO_SUCH_THREAD (KILL of an unknown id)
inline constexpr Code kKillDenied{1095, "HY000"};         // ER_KILL_DENIED_ERROR
inline constexpr Code kQueryInterrupted{1317, "70100"};   // ER_QUERY_INTERRUPTED
inline constexpr Code kConnectionKilled{1927, "70100"};   // ER_CONNECTION_KILLED
inline constexpr Code kTooManyStatements{1461, "42000"};  // ER_MAX_PREPARED_STMT_COUNT_REACHED

inline protocol::ErrPacket make(Code code, std::string message) {
  return protocol::ErrPacket{code.number, code.sql_state, std::move(message)};
}

// limits.max_prepared_statements_per_session reached, as the server words its own limit.
inline protocol::ErrPacket tooManyStatements(uint32_t limit) {
  return make(kTooManyStatements,
              "Can't create more than max_prepared_stmt_count statements (current value: " + std::to_string(limit) + ")");
}

}  // namespace sp::proxy::client_error
