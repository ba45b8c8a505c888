// Comparisons into uint8 (1 true, 0 false); NaN compares unequal to everything.
//   cmp_<op>[_strided]_<dtype>   op: eq ne lt le gt ge; dtype: the inputs'
// The _strided variants walk views (broadcast inputs have 0 strides); the others take
// dense views (no index math). f16 and bf16 compare in float, as the CPU.
#include "cmp.h"
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
                    device uchar* dst [[buffer(2)]], constant CmpKParams& p [[buffer(3)]],
                    EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  int64_t off[3];
  ew_offsets<3, Strided>(p.l, p.start + int64_t(gid.x), off);
  dst[off[2]] = Op()(Ew<T>::load(lhs[off[0]]), Ew<T>::load(rhs[off[1]])) ? uchar(1) : uchar(0);
}

#define EMBER_CMP(name, strided_name, T, Op) \
  EMBER_KERNEL(name, cmp_map<T, Op, false>)  \
  EMBER_KERNEL(strided_name, cmp_map<T, Op, true>)

EMBER_CMP(cmp_eq_f32, cmp_eq_strided_f32, float, CmpEq)
EMBER_CMP(cmp_eq_f16, cmp_eq_strided_f16, half, CmpEq)
EMBER_CMP(cmp_eq_bf16, cmp_eq_strided_bf16, bf16_t, CmpEq)
EMBER_CMP(cmp_eq_i64, cmp_eq_strided_i64, int64_t, CmpEq)
EMBER_CMP(cmp_eq_u32, cmp_eq_strided_u32, uint, CmpEq)
EMBER_CMP(cmp_eq_u8, cmp_eq_strided_u8, uchar, CmpEq)
EMBER_CMP(cmp_ne_f32, cmp_ne_strided_f32, float, CmpNe)
EMBER_CMP(cmp_ne_f16, cmp_ne_strided_f16, half, CmpNe)
EMBER_CMP(cmp_ne_bf16, cmp_ne_strided_bf16, bf16_t, CmpNe)
EMBER_CMP(cmp_ne_i64, cmp_ne_strided_i64, int64_t, CmpNe)
EMBER_CMP(cmp_ne_u32, cmp_ne_strided_u32, uint, CmpNe)
EMBER_CMP(cmp_ne_u8, cmp_ne_strided_u8, uchar, CmpNe)
EMBER_CMP(cmp_lt_f32, cmp_lt_strided_f32, float, CmpLt)
EMBER_CMP(cmp_lt_f16, cmp_lt_strided_f16, half, CmpLt)
EMBER_CMP(cmp_lt_bf16, cmp_lt_strided_bf16, bf16_t, CmpLt)
EMBER_CMP(cmp_lt_i64, cmp_lt_strided_i64, int64_t, CmpLt)
EMBER_CMP(cmp_lt_u32, cmp_lt_strided_u32, uint, CmpLt)
EMBER_CMP(cmp_lt_u8, cmp_lt_strided_u8, uchar, CmpLt)
EMBER_CMP(cmp_le_f32, cmp_le_strided_f32, float, CmpLe)
EMBER_CMP(cmp_le_f16, cmp_le_strided_f16, half, CmpLe)
EMBER_CMP(cmp_le_bf16, cmp_le_strided_bf16, bf16_t, CmpLe)
EMBER_CMP(cmp_le_i64, cmp_le_strided_i64, int64_t, CmpLe)
EMBER_CMP(cmp_le_u32, cmp_le_strided_u32, uint, CmpLe)
EMBER_CMP(cmp_le_u8, cmp_le_strided_u8, uchar, CmpLe)
EMBER_CMP(cmp_gt_f32, cmp_gt_strided_f32, float, CmpGt)
EMBER_CMP(cmp_gt_f16, cmp_gt_strided_f16, half, CmpGt)
EMBER_CMP(cmp_gt_bf16, cmp_gt_strided_bf16, bf16_t, CmpGt)
EMBER_CMP(cmp_gt_i64, cmp_gt_strided_i64, int64_t, CmpGt)
EMBER_CMP(cmp_gt_u32, cmp_gt_strided_u32, uint, CmpGt)
EMBER_CMP(cmp_gt_u8, cmp_gt_strided_u8, uchar, CmpGt)
EMBER_CMP(cmp_ge_f32, cmp_ge_strided_f32, float, CmpGe)
EMBER_CMP(cmp_ge_f16, cmp_ge_strided_f16, half, CmpGe)
EMBER_CMP(cmp_ge_bf16, cmp_ge_strided_bf16, bf16_t, CmpGe)
EMBER_CMP(cmp_ge_i64, cmp_ge_strided_i64, int64_t, CmpGe)
EMBER_CMP(cmp_ge_u32, cmp_ge_strided_u32, uint, CmpGe)
EMBER_CMP(cmp_ge_u8, cmp_ge_strided_u8, uchar, CmpGe)
