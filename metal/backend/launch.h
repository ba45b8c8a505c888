// The one launcher of the elementwise families: one lane per element, in chunks, and the
// kernel names the host derives from the op table (family_op[_strided]_dtype).
#pragma once

#include <algorithm>
#include <string>

#include "metal_backend.h"

namespace ember::metal {

// gid.x is 32 bits wide: views bigger than this go in several dispatches.
constexpr int64_t kElementwiseChunk = int64_t(1) << 30;

// Launches `kernel` over elements 0 .. n - 1; P has the `start` and `count` of a chunk.
template <typename P>
void launch_elementwise(MetalDevice& dev, const char* family, const std::string& kernel,
                        const KernelBuffers& buffers, P params, int64_t n) {
  for (int64_t s = 0; s < n; s += kElementwiseChunk) {
    params.start = s;
    params.count = std::min(kElementwiseChunk, n - s);
    dev.dispatch_1d(family, kernel, buffers, params, params.count);
  }
}

// Lanes per group of a barrier kernel written for `want` (a power of two) lanes that also
// works with any power of two below: `want`, or the largest the pipeline allows.
inline uint32_t power_of_two_group(MetalDevice& dev, const char* family, const std::string& kernel,
                                   uint32_t want) {
  uint32_t group = want;
  while (group > 1 && group > dev.max_group(family, kernel)) group >>= 1;
  return group;
}

// "unary_exp_f32", "binary_add_strided_i64": what kernels/<family>.metal instantiates.
inline std::string kernel_name(const char* family, const char* op, bool dense, DType dtype) {
  return std::string(family) + "_" + op + (dense ? "_" : "_strided_") + dtype_suffix(dtype);
}

}  // namespace ember::metal
