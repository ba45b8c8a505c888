// Emulator-only hooks for tests (the emulated runtime itself is reached through
// rt::system_runtime() with EMBER_METAL_EMULATOR set).
#pragma once

#include "../runtime/runtime.h"

namespace ember::metal::emu {

// Closes (open = false) or opens the gate of an emulated queue. While it is closed the
// queue's worker starts no further command buffer (one already running finishes);
// commits still enqueue, and wait() on them blocks until the gate opens. Lets a test
// hold one queue's work back and show what another queue, or a missing wait, sees.
// Throws std::invalid_argument when `queue` is not an emulated queue.
void set_queue_gate(rt::Queue& queue, bool open);

}  // namespace ember::metal::emu
