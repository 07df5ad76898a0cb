// Internal: MariaDB 10.11's collation id -> character set name table
// (generated, parser/collations.cpp), sorted by id.
#pragma once
#include <cstddef>
#include <cstdint>

namespace sp::parser::detail {

struct CollationEntry {
  uint16_t id;
  const char* charset;
};

extern const CollationEntry kCollations[];
extern const size_t kCollationCount;

}  // namespace sp::parser::detail
