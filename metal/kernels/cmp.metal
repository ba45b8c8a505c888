// Comparisons into uint8 (1 true, 0 false); NaN compares unequal to everything. One
// functor per row of the op table (core/ops.def), instantiated in one line.
//   cmp_<op>[_strided]_<dtype>   dtype: the inputs'
// The _strided variants walk views (broadcast inputs have 0 strides); the others take
// dense views (no index math). f16 and bf16 compare in float, as the CPU.
#include "binary.h"
#include "common.h"
#include "copy.h"

struct CmpEq {
  template <typename C>
  bool operator()(C a, C b) {
    return a == b;
  }
};
struct CmpNe {
  template <typename C>
  bool operator()(C a, C b) {
    return a != b;
  }
};
struct CmpLt {
  template <typename C>
  bool operator()(C a, C b) {
    return a < b;
  }
};
struct CmpLe {
  template <typename C>
  bool operator()(C a, C b) {
    return a <= b;
  }
};
struct CmpGt {
  template <typename C>
  bool operator()(C a, C b) {
    return a > b;
  }
};
struct CmpGe {
  template <typename C>
  bool operator()(C a, C b) {
    return a >= b;
  }
};

template <typename T, typename Op, bool Strided>
kernel void cmp_map(device const T* lhs [[buffer(0)]], device const T* rhs [[buffer(1)]],
                    device uchar* dst [[buffer(2)]], constant BinaryKParams& p [[buffer(3)]],
                    EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  int64_t off[3];
  ew_offsets<3, Strided>(p.l, p.start + int64_t(gid.x), off);
  dst[off[2]] = Op()(Ew<T>::load(lhs[off[0]]), Ew<T>::load(rhs[off[1]])) ? uchar(1) : uchar(0);
}

#define EMBER_CMP_KERNELS(name, sfx, T, Op)               \
  EMBER_KERNEL(cmp_##name##_##sfx, cmp_map<T, Op, false>) \
  EMBER_KERNEL(cmp_##name##_strided_##sfx, cmp_map<T, Op, true>)

// One line per op: comparisons take every dtype (the Predicate class of core/ops.def).
#define EMBER_CMP_PREDICATE(name, Op) EMBER_FOR_ALL_TYPES(EMBER_CMP_KERNELS, name, Op)

EMBER_CMP_PREDICATE(eq, CmpEq)
EMBER_CMP_PREDICATE(ne, CmpNe)
EMBER_CMP_PREDICATE(lt, CmpLt)
EMBER_CMP_PREDICATE(le, CmpLe)
EMBER_CMP_PREDICATE(gt, CmpGt)
EMBER_CMP_PREDICATE(ge, CmpGe)
