// where(cond, a, b): the condition may have any dtype; nonzero means true.
#include "cpu_backend.h"
#include "elementwise.h"

namespace ember::cpu {

void CpuStorage::where(const Layout& cond, const BackendStorage& on_true, const Layout& t_layout,
                       const BackendStorage& on_false, const Layout& f_layout, BackendStorage& dst,
                       const Layout& dst_layout) const {
  dispatch_dtype(dtype_, [&](auto ctag) {
    using CT = decltype(ctag);
    dispatch_dtype(on_true.dtype(), [&](auto vtag) {
      using V = decltype(vtag);
      map3(ptr<CT>(), cond, as_cpu(on_true).ptr<V>(), t_layout, as_cpu(on_false).ptr<V>(), f_layout,
           as_cpu(dst).ptr<V>(), dst_layout,
           [](CT c, V t, V f) { return compute_t<CT>(c) != compute_t<CT>(0) ? t : f; });
    });
  });
}

}  // namespace ember::cpu
