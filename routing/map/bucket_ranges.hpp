// Bucket and shard lists as the map writes them ("0-15,17"): shared by the
// canonical rendering (shard_map.cpp) and the map a move writes (move_plan.cpp).
#pragma once
#include <string>
#include <vector>

namespace sp::routing {

struct BucketRange;

std::string renderRanges(const std::vector<BucketRange>& ranges);

}  // namespace sp::routing
