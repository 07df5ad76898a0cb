// The steps of an online move against the real backends (MoveSteps of
// move_machine.hpp): the snapshot copy, the binlog catch-up
// (move_catchup.hpp), chunked checksums, the target snapshot at the switch,
// publishing the map after the move, the batched deletes of CLEANUP.
//
// Connections of its own (not the workers' pools): the source snapshot, the
// target writer, the catch-up's target session and binlog stream, the
// target snapshot for the verify after the switch. Runs on the move thread.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "proxy/move/move_machine.hpp"
#include "proxy/core/proxy_context.hpp"
#include "routing/map/move_plan.hpp"

namespace sp::proxy {

class ShardMapManager;

std::unique_ptr<MoveSteps> makeBackendMoveSteps(ProxyContext& context, ShardMapManager& maps,
                                                routing::MovePlan plan, int64_t move_id);

}  // namespace sp::proxy
