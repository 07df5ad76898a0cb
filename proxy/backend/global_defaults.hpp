// A session sees the global defaults in force when it connected (issue 20).
// MariaDB copies the global variables into a session when it starts (login,
// COM_CHANGE_USER, COM_RESET_CONNECTION); a pooled backend connection opened
// before a `SET GLOBAL` keeps the old values, so a client session that logs
// in after it must not be served by such a connection as it is.
//
// The proxy counts "global epochs": a statement that changes global variables
// (SET GLOBAL / @@global.x, seen by the classifier) moves the epoch on, before
// it is sent and again after its answer (a connection opened or reset in
// between counts as older). Every backend connection remembers the epoch its
// server session started in; every client session the epoch of its login. A
// session that borrows a connection older than its login resets it first
// (COM_RESET_CONNECTION re-reads the globals). The common case costs one
// integer comparison per borrow. A session that logged in before the change
// may still be served by a connection that started after it (it then sees
// the new defaults): the server's own sessions never would.
//
// Some globals are read only when a server session starts, and neither a
// reset nor a SET SESSION changes them afterwards: max_allowed_packet and
// net_buffer_length (session-read-only in MariaDB). A SET GLOBAL of one of
// them through the proxy marks the epoch after its answer as the "connect
// limits epoch"; a pool never lends, nor keeps, a connection logged in
// before it (BackendPool::takeIdle/release close it), so a statement is
// judged by the limit a fresh connection would have (issue 27): neither
// refused by a connection that kept a lowered limit nor accepted by one
// that kept a raised one. Connections pinned to a session keep theirs, as
// the session's own connection to the server would. A change made on the
// server directly, past the proxy, is not seen (docs/configuration.md).
#pragma once
#include <atomic>
#include <cstdint>

#include "parser/classify.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

class BackendConnection;

// Process-wide: SET GLOBAL on one worker's connection changes every pool's backend.
uint64_t currentGlobalsEpoch();
void advanceGlobalsEpoch();

// True for a statement that may change global defaults (SET GLOBAL ...).
bool changesGlobalDefaults(const parser::StatementInfo& info);

// True for a SET GLOBAL of a variable the server reads only at connect time.
bool changesConnectLimits(const parser::StatementInfo& info);
// Connections logged in before this epoch (BackendConnection::openedEpoch)
// are replaced, not lent. Called once a changesConnectLimits() statement
// has been answered (after advanceGlobalsEpoch()).
uint64_t currentConnectLimitsEpoch();
void markConnectLimitsChanged();

// Brings `conn` to the global defaults of `session_epoch` when it started
// earlier (COM_RESET_CONNECTION; its applied state is then the server's
// defaults). False when the reset failed (the connection is broken).
awaitable<bool> refreshGlobalDefaults(BackendConnection& conn, uint64_t session_epoch);

}  // namespace sp::proxy
