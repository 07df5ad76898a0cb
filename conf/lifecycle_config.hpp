// `partitions:` and `archive:` of the configuration (docs/operations.md,
// "Data lifecycle").
// Its own header (conf/config.hpp holds the whole configuration): a file
// that reads only this section includes only this.
#pragma once
#include <cstdint>
#include <string>

namespace sp::conf {

// Data lifecycle of month-partitioned and archived tables (docs/operations.md,
// "Data lifecycle"): partition upkeep, archive batches, export files.
struct PartitionsConfig {
  uint32_t ahead = 3;            // future months SHOW PARTITIONS expects and automatic upkeep creates
  uint32_t check_every_s = 0;    // automatic upkeep period; 0 = off (ENSURE PARTITIONS by hand)
};

struct ArchiveConfig {
  uint32_t batch_rows = 2000;    // rows per INSERT ... SELECT / DELETE batch of ARCHIVE msg
  uint32_t pause_ms = 50;        // sleep between batches (throttle)
  uint32_t max_retries = 10;     // a batch whose two counts differ is rolled back and retried this often
  std::string export_dir;        // where ARCHIVE tg_channel_message writes month files; empty = refused
};

}  // namespace sp::conf
