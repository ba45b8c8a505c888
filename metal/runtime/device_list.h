// Which GPUs the Metal runtime offers, shared by mtl_runtime.mm and the emulator so that
// the emulator exercises the same policy.
#pragma once

#include <optional>
#include <utility>
#include <vector>

namespace ember::metal::rt {

// The enumerated devices; when that list is empty (MTLCopyAllDevices() can return none in
// headless, sandboxed or virtualized sessions), the system default device if there is one.
// `system_default` is called only then, and returns std::nullopt when there is none.
template <typename T, typename Default>
std::vector<T> devices_or_default(std::vector<T> listed, Default&& system_default) {
  if (listed.empty()) {
    if (std::optional<T> device = system_default()) listed.push_back(std::move(*device));
  }
  return listed;
}

}  // namespace ember::metal::rt
