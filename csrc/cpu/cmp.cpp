// Comparisons: uint8 results (1 true, 0 false); NaN compares unequal to everything. One
// functor per row of the op table (core/ops.def).
#include "cpu_backend.h"
#include "elementwise.h"

namespace ember::cpu {

namespace {

#define EMBER_CPU_CMP(Name, expr)     \
  struct Name {                       \
    template <typename C>             \
    bool operator()(C x, C y) const { \
      return expr;                    \
    }                                 \
  };
EMBER_CPU_CMP(Eq, x == y)
EMBER_CPU_CMP(Ne, x != y)
EMBER_CPU_CMP(Lt, x < y)
EMBER_CPU_CMP(Le, x <= y)
EMBER_CPU_CMP(Gt, x > y)
EMBER_CPU_CMP(Ge, x >= y)
#undef EMBER_CPU_CMP

template <typename Op, typename T>
void apply(const T* a, const Layout& la, const T* b, const Layout& lb, uint8_t* out,
           const Layout& dst) {
  using C = compute_t<T>;
  map2(a, la, b, lb, out, dst, [](T x, T y) { return uint8_t(Op()(C(x), C(y))); });
}

}  // namespace

void CpuStorage::cmp(CmpOp op, const Layout& lhs, const BackendStorage& rhs,
                     const Layout& rhs_layout, BackendStorage& dst,
                     const Layout& dst_layout) const {
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T* b = as_cpu(rhs).ptr<T>();
    uint8_t* out = as_cpu(dst).ptr<uint8_t>();
    switch (op) {
#define EMBER_CMP(Enum, name, cls) \
  case CmpOp::Enum:                \
    return apply<Enum>(ptr<T>(), lhs, b, rhs_layout, out, dst_layout);
#include "core/ops.def"
    }
  });
}

}  // namespace ember::cpu
