// Loads the months ARCHIVE ... BEFORE dropped (routing/archived_months.hpp)
// from the SQLite file into the process context: at start-up and after each
// ARCHIVE run.
#pragma once
#include <string>

namespace sp::proxy {

struct ProxyContext;

// Reads the retention rows of the SQLite file (config `cache:`) into
// context.archived_months; an error text when the file cannot be read.
std::string loadArchivedMonths(ProxyContext& context);

}  // namespace sp::proxy
