// where(cond, a, b): a bool or uint8 condition, nonzero bytes true.
#include "cpu_backend.h"
#include "elementwise.h"

namespace ember::cpu {

namespace {

// A dense run of where, built per ISA level (elementwise.h): the byte condition widened
// to V's lanes and a masked select, which the baseline build does not vectorise for
// 8-byte values.
EMBER_CPU_LEVELS(template <typename V>, , select_run,
                 (const uint8_t* c, const V* t, const V* f, V* o, int64_t n), (c, t, f, o, n), {
                   for (int64_t j = 0; j < n; ++j) o[j] = c[j] != 0 ? t[j] : f[j];
                 })

}  // namespace

void CpuStorage::where(const Layout& cond, const BackendStorage& on_true, const Layout& t_layout,
                       const BackendStorage& on_false, const Layout& f_layout, BackendStorage& dst,
                       const Layout& dst_layout) const {
  // Core passes bool or uint8 conditions (others become t != 0 first): their bytes.
  if (dtype_size(dtype_) != 1) throw_invalid("where", "the condition must be bool or uint8");
  // where moves values, never computes on them: one loop per element size serves every
  // dtype, an integer select that vectorises (on the 16-bit floats' structs it was a
  // branch per element, mispredicted on a data-dependent mask).
  auto go = [&](auto tag) {
    using V = decltype(tag);
    const uint8_t* c = ptr<uint8_t>();
    const V* t = static_cast<const V*>(as_cpu(on_true).data());
    const V* f = static_cast<const V*>(as_cpu(on_false).data());
    V* o = static_cast<V*>(as_cpu(dst).data());
    if (cond.is_contiguous() && t_layout.is_contiguous() && f_layout.is_contiguous() &&
        dst_layout.is_contiguous()) {
      parallel_for(dst_layout.numel(), kParallelGrain, [&](int64_t lo, int64_t hi) {
        select_run(c + cond.offset() + lo, t + t_layout.offset() + lo,
                   f + f_layout.offset() + lo, o + dst_layout.offset() + lo, hi - lo);
      });
      return;
    }
    map3(c, cond, t, t_layout, f, f_layout, o, dst_layout,
         [](uint8_t c, V t, V f) { return c != 0 ? t : f; });
  };
  switch (dtype_size(on_true.dtype())) {
    case 1: return go(uint8_t{});
    case 2: return go(uint16_t{});
    case 4: return go(uint32_t{});
    default: return go(uint64_t{});
  }
}

}  // namespace ember::cpu
