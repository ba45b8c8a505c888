// The emulator's kernel registry and the services a running lane calls (barrier, simd
// exchange, threadgroup memory). Plain C++: included by msl_shim.h before it defines the
// MSL address-space words, and by the runner and the emulated runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember::metal::emu {

// A kernel's error (bad barrier use, divergent simd op, ...), text names the kernel.
struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The six values of EMBER_THREAD_ARGS for one lane.
struct ThreadArgs {
  uint32_t gid[3], lid[3], tgid[3], tgsize[3];
  uint32_t simd_lane, simd_group;
};

// Calls the kernel for one lane: buffers[i] is the i-th buffer argument (already
// offset), params the bytes of the params struct.
using KernelInvoke = void (*)(void* const* buffers, const void* params, const ThreadArgs& t);

struct KernelInfo {
  const char* family;  // kernels/<family>.metal (the library label)
  const char* name;    // the host name given to EMBER_KERNEL
  bool grouped;        // EMBER_KERNEL_GROUPED: lanes run as fibers
  size_t num_buffers;
  size_t params_size;  // sizeof the params struct
  KernelInvoke invoke;
};

// Called by the static initialisers of EMBER_KERNEL / EMBER_KERNEL_GROUPED and of each
// generated family TU. A duplicate name in one family aborts (it would be ambiguous).
bool register_kernel(const KernelInfo& kernel);
bool register_family(const char* family);

const KernelInfo* find_kernel(const std::string& family, const std::string& name);
bool has_family(const std::string& family);
std::vector<std::string> registered_families();                                // sorted
std::vector<const KernelInfo*> registered_kernels(const std::string& family);  // by name

// Lane services (valid only inside a running kernel; the runner knows the lane).
// `file`/`line` name the barrier's call site, so divergent barriers can be told apart.
void lane_barrier(const char* file, int line);
// Puts `size` bytes (<= 16) of this lane into its simdgroup's exchange, waits until
// every lane of the simdgroup did the same `op`, then copies the simdgroup's values
// into `all` (32 slots of `size` bytes). Sets `lanes` (lanes in this simdgroup) and
// `self` (this lane's index in it).
void lane_simd_exchange(const char* op, const void* value, size_t size, void* all, uint32_t* lanes,
                        uint32_t* self);
// The group's k-th threadgroup array for the lane's k-th call: the first lane to reach
// it allocates exactly elem_size * n bytes (freed when the group ends).
void* lane_threadgroup_alloc(size_t elem_size, size_t n, size_t align);

}  // namespace ember::metal::emu
