#include "proxy/schema/schema_change_record.hpp"

#include <array>

namespace sp::proxy {

namespace {

// As saved in SQLite and etcd: never renamed, only added to.
constexpr std::array<std::string_view, 4> kChangeStates = {"running", "done", "failed", "adopted"};
constexpr std::array<std::string_view, 5> kTableStates = {"pending", "done", "already", "absent", "failed"};

template <typename E, size_t N>
std::optional<E> named(const std::array<std::string_view, N>& names, std::string_view text) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<E>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view toString(SchemaChangeState state) { return kChangeStates[static_cast<size_t>(state)]; }
std::string_view toString(TableChangeState state) { return kTableStates[static_cast<size_t>(state)]; }

std::optional<SchemaChangeState> schemaChangeStateNamed(std::string_view name) {
  return named<SchemaChangeState>(kChangeStates, name);
}

std::optional<TableChangeState> tableChangeStateNamed(std::string_view name) {
  return named<TableChangeState>(kTableStates, name);
}

}  // namespace sp::proxy
