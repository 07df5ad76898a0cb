// The `background:` keys (docs/configuration.md, "background"), with the
// ranges of conf::kBackgroundKeys.
#include "conf/field_readers.hpp"
#include "conf/sections.hpp"

namespace sp::conf::detail {
namespace {

template <size_t I>
void readBackgroundKey(Walker& w, const YAML::Node& v, const std::string& p, BackgroundConfig& b) {
  constexpr BackgroundKey key = kBackgroundKeys[I];
  assign(w.readUInt(v, p, key.min, key.max), b.*key.member);
}

template <size_t... I>
constexpr std::array<FieldSpec<BackgroundConfig>, sizeof...(I)> backgroundFields(std::index_sequence<I...>) {
  return {{{kBackgroundKeys[I].name, false, readBackgroundKey<I>}...}};
}

constexpr auto kBackgroundFields = backgroundFields(std::make_index_sequence<kBackgroundKeys.size()>{});

}  // namespace

void readBackground(Walker& w, const YAML::Node& v, const std::string& p, BackgroundConfig& out) {
  if (v.IsNull()) return;
  readMapping<BackgroundConfig>(w, v, p, kBackgroundFields, out);
}

}  // namespace sp::conf::detail
