// where(cond, a, b): a bool or uint8 condition, nonzero bytes true.
#include "cpu_backend.h"
#include "elementwise.h"

namespace ember::cpu {

void CpuStorage::where(const Layout& cond, const BackendStorage& on_true, const Layout& t_layout,
                       const BackendStorage& on_false, const Layout& f_layout, BackendStorage& dst,
                       const Layout& dst_layout) const {
  // Core passes bool or uint8 conditions (others become t != 0 first): their bytes.
  if (dtype_size(dtype_) != 1) throw_invalid("where", "the condition must be bool or uint8");
  dispatch_dtype(on_true.dtype(), [&](auto vtag) {
    using V = decltype(vtag);
    map3(ptr<uint8_t>(), cond, as_cpu(on_true).ptr<V>(), t_layout, as_cpu(on_false).ptr<V>(),
         f_layout, as_cpu(dst).ptr<V>(), dst_layout,
         [](uint8_t c, V t, V f) { return c != 0 ? t : f; });
  });
}

}  // namespace ember::cpu
