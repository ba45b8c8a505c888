// Runs one kernel dispatch on the calling thread. EMBER_KERNEL kernels: each lane a
// straight call. EMBER_KERNEL_GROUPED kernels: each lane a ucontext fiber, started in a
// shuffled order (fixed per kernel and group), a barrier a yield until every lane of
// the group arrives, simd_* an exchange among the 32 lanes of a simdgroup.
#pragma once

#include <cstdint>
#include <vector>

#include "kernel_registry.h"

namespace ember::metal::emu {

constexpr uint32_t kSimdWidth = 32;
constexpr uint32_t kMaxThreadsPerGroup = 1024;
constexpr size_t kMaxThreadgroupMemory = 32 * 1024;  // Apple GPUs' maxThreadgroupMemoryLength

struct Dispatch {
  const KernelInfo* kernel = nullptr;
  std::vector<void*> buffers;    // one per kernel buffer argument, offsets applied
  const void* params = nullptr;  // kernel->params_size bytes, aligned for any scalar
  uint32_t groups[3] = {1, 1, 1};
  uint32_t group_size[3] = {1, 1, 1};
};

// Throws KernelError whose text names the kernel (and the threadgroup) on a misuse of
// barriers, simd functions or threadgroup memory, or when the kernel throws.
void run_dispatch(const Dispatch& d);

}  // namespace ember::metal::emu
