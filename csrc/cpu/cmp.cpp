// Comparisons: uint8 results (1 true, 0 false); NaN compares unequal to everything.
#include "cpu_backend.h"
#include "elementwise.h"

namespace ember::cpu {

namespace {

template <typename T>
void run_cmp(CmpOp op, const T* a, const Layout& la, const T* b, const Layout& lb, uint8_t* out,
             const Layout& dst) {
  using C = compute_t<T>;
  auto go = [&](auto f) {
    map2(a, la, b, lb, out, dst, [f](T x, T y) { return uint8_t(f(C(x), C(y))); });
  };
  switch (op) {
    case CmpOp::Eq: return go([](C x, C y) { return x == y; });
    case CmpOp::Ne: return go([](C x, C y) { return x != y; });
    case CmpOp::Lt: return go([](C x, C y) { return x < y; });
    case CmpOp::Le: return go([](C x, C y) { return x <= y; });
    case CmpOp::Gt: return go([](C x, C y) { return x > y; });
    case CmpOp::Ge: return go([](C x, C y) { return x >= y; });
  }
}

}  // namespace

void CpuStorage::cmp(CmpOp op, const Layout& lhs, const BackendStorage& rhs,
                     const Layout& rhs_layout, BackendStorage& dst,
                     const Layout& dst_layout) const {
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    run_cmp<T>(op, ptr<T>(), lhs, as_cpu(rhs).ptr<T>(), rhs_layout, as_cpu(dst).ptr<uint8_t>(),
               dst_layout);
  });
}

}  // namespace ember::cpu
