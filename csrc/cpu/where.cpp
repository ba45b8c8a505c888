// where(cond, a, b): a bool or uint8 condition, nonzero bytes true.
#include "cpu_backend.h"
#include "elementwise.h"

namespace ember::cpu {

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
    map3(ptr<uint8_t>(), cond, static_cast<const V*>(as_cpu(on_true).data()), t_layout,
         static_cast<const V*>(as_cpu(on_false).data()), f_layout,
         static_cast<V*>(as_cpu(dst).data()), dst_layout,
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
