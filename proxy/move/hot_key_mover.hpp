// Runs the hot-key policy (overload.hot_key_auto_move; hot_key_policy.hpp):
// every second, on the move thread, it feeds the policy what SHOW HOT KEYS
// sees, the map in force and the running moves, and starts the move the
// policy asks for through MoveCoordinator::start, the path of the admin's
// MOVE KEY: the same refusals, write hold, verify and (in a fleet) fenced
// cut-over. The move's created_by says the policy started it and why.
//
// In a fleet only the proxy holding ha/leader decides (the fleet's one
// deciding proxy, elected under its lease: docs/availability.md), judging
// from the statements that pass through it; the others never start a move
// of their own, so two proxies never move the same key at once.
#pragma once
#include <memory>
#include <string>

#include "proxy/core/proxy_context.hpp"
#include "proxy/move/hot_key_policy.hpp"
#include "proxy/net/net.hpp"

namespace sp::proxy {

class MoveCoordinator;

class HotKeyMover {
 public:
  HotKeyMover(ProxyContext& context, MoveCoordinator& moves) : context_(context), moves_(moves) {}
  HotKeyMover(const HotKeyMover&) = delete;
  HotKeyMover& operator=(const HotKeyMover&) = delete;

  // Checks until the move thread stops (MoveCoordinator::stop). Call once,
  // after the fleet agent (if any) is set in the context.
  void start();

 private:
  awaitable<void> run();
  void check();
  // Alone: always; in a fleet: while this proxy holds ha/leader in a session with etcd.
  bool decides() const;
  void startMove(const HotKeyMoveDecision& decision);

  ProxyContext& context_;
  MoveCoordinator& moves_;
  HotKeyPolicy policy_;  // the move thread only
  bool decided_ = false;  // decides() at the previous check, for a log line when it changes
  std::string blocked_;   // policy_.blocked() logged last
};

}  // namespace sp::proxy
