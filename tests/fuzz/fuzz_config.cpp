// libFuzzer target for the config parsers: any bytes parsed as a target config, as a drafter
// config (with and without a target depth) and by the kind detector must either succeed or
// raise a dfi::Error. What parses must be self-consistent, and a pair that parses goes through
// the compatibility check.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "dfi/base/error.h"
#include "dfi/modelspec/compatibility.h"
#include "dfi/modelspec/config_kind.h"
#include "dfi/modelspec/drafter_config.h"
#include "dfi/modelspec/target_config.h"

using namespace dfi::modelspec;

namespace {

void check(bool condition) {
  if (!condition) __builtin_trap();
}

void checkRope(const RopeConfig& rope, int headDim, int maxPositions) {
  const int rotary = rope.rotaryDim(headDim);
  check(rotary >= 2 && rotary % 2 == 0 && rotary <= headDim);
  for (double f : ropeInverseFrequencies(rope, headDim, maxPositions)) check(!(f < 0));
}

template <typename Parse>
auto attempt(Parse parse) -> std::optional<decltype(parse())> {
  try {
    return parse();
  } catch (const dfi::Error&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  attempt([&] { return detectConfigKind(text, "fuzz"); });

  const auto target = attempt([&] { return parseTargetConfigText(text, "fuzz"); });
  if (target) {
    check(static_cast<int>(target->layerTypes.size()) == target->numHiddenLayers);
    check(target->numAttentionHeads % target->numKeyValueHeads == 0);
    checkRope(target->rope, target->headDim, target->maxPositionEmbeddings);
  }
  for (std::optional<int> depth : {std::optional<int>{}, std::optional<int>{36}}) {
    const auto drafter = attempt([&] { return parseDrafterConfigText(text, "fuzz", depth); });
    if (!drafter) continue;
    check(static_cast<int>(drafter->layerTypes.size()) == drafter->numHiddenLayers);
    check(drafter->blockSize >= 2);
    for (int id : drafter->targetLayerIds) check(id >= 0);
    checkRope(drafter->rope, drafter->headDim, drafter->maxPositionEmbeddings);
    if (target) checkCompatibility(*drafter, *target, {.drafterFcWeightShape = std::vector<std::int64_t>{1, 2, 3}});
  }
  return 0;
}
