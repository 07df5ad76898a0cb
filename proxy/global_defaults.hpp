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
#pragma once
#include <atomic>
#include <cstdint>

#include "parser/classify.hpp"
#include "proxy/net.hpp"

namespace sp::proxy {

class BackendConnection;

// Process-wide: SET GLOBAL on one worker's connection changes every pool's backend.
uint64_t currentGlobalsEpoch();
void advanceGlobalsEpoch();

// True for a statement that may change global defaults (SET GLOBAL ...).
bool changesGlobalDefaults(const parser::StatementInfo& info);

// Brings `conn` to the global defaults of `session_epoch` when it started
// earlier (COM_RESET_CONNECTION; its applied state is then the server's
// defaults). False when the reset failed (the connection is broken).
awaitable<bool> refreshGlobalDefaults(BackendConnection& conn, uint64_t session_epoch);

}  // namespace sp::proxy
