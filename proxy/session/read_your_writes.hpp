// Read-your-writes for one session (docs/availability.md): per backend, the
// GTID of the session's last write there, and whether a later write's GTID
// is not known (an open transaction's writes until COMMIT reports it; a
// split write, whose answers the proxy merges, until the next GTID). A
// replica read of that backend must first have applied the GTID; with a
// write of unknown GTID the backend is read on its primary.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/session_track.hpp"
#include "proxy/core/gtid.hpp"

namespace sp::proxy {

class ReadYourWrites {
 public:
  struct Requirement {
    bool primary_only = false;  // a write whose GTID is not known yet
    std::optional<Gtid> gtid;   // the replica must have applied this
  };

  // After a statement ran on `backend`'s primary. `changes`: what its answer
  // reported (last_gtid when it wrote a transaction to the binary log);
  // `tracked`: the connection reports session changes at all;
  // `in_transaction`: a transaction is still open after it; `may_write`: it
  // was not a plain read.
  void afterPrimaryStatement(std::string_view backend, const protocol::SessionChanges& changes, bool tracked,
                             bool in_transaction, bool may_write);
  // A write whose answer carried no session changes (split writes over shards).
  void markPending(std::string_view backend);
  Requirement requirement(std::string_view backend) const;

 private:
  struct Mark {
    std::optional<Gtid> gtid;            // the last GTID its writes got
    bool unknown_write = false;          // a write since, whose GTID nobody reported: until the next GTID
    bool open_transaction_write = false; // the open transaction wrote: until it ends
  };
  std::map<std::string, Mark, std::less<>> marks_;
};

}  // namespace sp::proxy
