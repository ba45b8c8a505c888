// The Metal device kind as core and the bindings see it. Compiled in even when the
// backend is not (EMBER_METAL=OFF), so that asking for Metal says how to get it.
#include "core/backend.h"

namespace ember::metal {

namespace {

DeviceKind metal_kind() {
  DeviceKind k;
  k.name = "metal";
  k.rank = 1;
  k.install_hint = "reinstall ember on a Mac (pip install ember builds Metal there)";
  k.doc = "A new Metal instance: its own queue, buffer pool and id.";
  k.fresh_by_default = true;  // candle's new_metal: every call opens a new queue
  // Each instance has its own MTLCommandQueue; Metal offers no cheap event between them.
  k.why_no_copy_between_instances = "their queues are not ordered with each other";
  return k;
}

const bool described = register_kind(metal_kind());

}  // namespace

}  // namespace ember::metal
